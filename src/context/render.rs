//! Rendering the retry context as Markdown within the `max_tokens` budget
//! (estimated as bytes / 4). Pure.
//!
//! The prompt is a list of blocks, each with a rank: when the total is over
//! budget, lines are cut from the end of the lowest-ranked block first (the
//! oldest attempts, then observations, the last diff, the reviewer's
//! critique, the errors in their code, the most recent attempt, and last
//! the failing checks' output); a block that cannot shrink further is
//! replaced by one line. Every cut says what it cut. The heading, the
//! required change and the original task are never cut; the task is not
//! counted against the budget.
//!
//! A reviewer's rejection (docs/review.md) leads the first prompt of the
//! round after it, in its own shape: `## ATTEMPT #N — previous attempt
//! rejected`, the required change, the critique verbatim, the line
//! comments beside their diff lines, the judged attempt's diff, then the
//! earlier rejections. Every rejection of the task stays in the later
//! prompts too, ranked above every other cuttable block, each one's
//! required change never cut.

use serde::{Deserialize, Serialize};

use super::{Context, Feedback, Label, PriorAttempt, Rejection};
use crate::config::{ContextConfig, ContextOrder};
use crate::text::{human_ms, plural};

pub(crate) const BYTES_PER_TOKEN: usize = 4;
/// Never cut.
const KEEP: u8 = u8::MAX;
/// `## Task` and the blank lines around the task: "\n## Task\n\n" + "\n".
const TASK_FRAME: usize = 11;

/// A cut the renderer made, for the AttemptContextTruncated event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Cut {
    pub section: String,
    pub lines: usize,
    /// The limit that caused it: `max_tokens`, `max_check_output_lines`, ...
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    pub prompt: String,
    pub budget_bytes: usize,
    /// The context's size (without the task) before and after the budget.
    pub before: usize,
    pub after: usize,
    pub cuts: Vec<Cut>,
}

#[derive(Debug, Clone)]
struct Block {
    name: String,
    rank: u8,
    head: Vec<String>,
    body: Vec<String>,
    /// Body lines kept.
    keep: usize,
    /// Lines never cut below this many.
    min_body: usize,
    /// Lines already cut by a section limit (shown in the same marker).
    pre_omitted: usize,
    limit: &'static str,
    dropped: bool,
}

impl Block {
    fn new(name: impl Into<String>, rank: u8, head: Vec<String>, body: Vec<String>) -> Block {
        let keep = body.len();
        Block { name: name.into(), rank, head, body, keep, min_body: 0, pre_omitted: 0, limit: "", dropped: false }
    }

    fn limited(mut self, omitted: usize, limit: &'static str) -> Block {
        self.pre_omitted = omitted;
        self.limit = limit;
        self
    }

    fn lines(&self) -> Vec<String> {
        if self.dropped {
            let n = self.head.len() + self.body.len() + self.pre_omitted;
            return vec![String::new(), format!("[... {}: {n} lines omitted]", self.name)];
        }
        let mut out = self.head.clone();
        let kept = &self.body[..self.keep];
        out.extend(kept.iter().cloned());
        let fences: Vec<&String> = kept.iter().filter(|l| l.trim_start().starts_with("```")).collect();
        if fences.len() % 2 == 1 {
            // Close the fence the cut left open, at its indentation.
            let open = fences[fences.len() - 1];
            out.push(format!("{}```", &open[..open.len() - open.trim_start().len()]));
        }
        let omitted = self.pre_omitted + (self.body.len() - self.keep);
        if omitted > 0 {
            out.push(format!("[... {omitted} line{} omitted]", plural(omitted)));
        }
        out
    }

    fn size(&self) -> usize {
        self.lines().iter().map(|l| l.len() + 1).sum()
    }

    fn can_shrink(&self) -> bool {
        self.rank != KEEP && !self.dropped
    }
}

/// Renders the prompt of `ctx`.
pub(crate) fn render(ctx: &Context, cfg: &ContextConfig) -> Rendered {
    let budget = cfg.max_tokens as usize * BYTES_PER_TOKEN;
    let task_section = format!("## Task\n\n{}", ctx.task.text.trim_end());
    let Some(prev) = &ctx.previous else {
        // A first attempt reads the task as written.
        let prompt = format!("{}\n", ctx.task.text.trim_end());
        return Rendered { prompt, budget_bytes: budget, before: 0, after: 0, cuts: Vec::new() };
    };
    let mut blocks = blocks(ctx, prev, budget);
    dedupe(&mut blocks);
    let before = blocks.iter().map(Block::size).sum::<usize>();
    // The task's heading and the separators around it count too.
    let total = fit(&mut blocks, budget.saturating_sub(TASK_FRAME));
    let mut cuts = Vec::new();
    for b in &blocks {
        if b.pre_omitted > 0 {
            cuts.push(Cut { section: b.name.clone(), lines: b.pre_omitted, why: b.limit.to_string() });
        }
        let by_budget = if b.dropped { b.head.len() + b.body.len() } else { b.body.len() - b.keep };
        if by_budget > 0 {
            cuts.push(Cut { section: b.name.clone(), lines: by_budget, why: "max_tokens".into() });
        }
    }
    if ctx.attempts_omitted > 0 {
        cuts.push(Cut {
            section: "earlier attempts".into(),
            lines: ctx.attempts_omitted,
            why: "max_prior_attempts".into(),
        });
    }
    let body: String = blocks.iter().flat_map(Block::lines).map(|l| l + "\n").collect();
    let body = body.trim_start_matches('\n');
    let prompt = match cfg.order {
        ContextOrder::FeedbackFirst => format!("{body}\n{task_section}\n"),
        ContextOrder::TaskFirst => format!("{task_section}\n\n{body}"),
    };
    Rendered { prompt, budget_bytes: budget, before, after: total, cuts }
}

/// Shrinks and drops `blocks`, lowest rank first, until they fit in
/// `budget` bytes (or nothing more can go). Returns their size.
fn fit(blocks: &mut [Block], budget_blocks: usize) -> usize {
    let mut total = blocks.iter().map(Block::size).sum::<usize>();
    while total > budget_blocks {
        let Some(i) =
            (0..blocks.len()).filter(|&i| blocks[i].can_shrink()).min_by_key(|&i| (blocks[i].rank, usize::MAX - i))
        else {
            break;
        };
        let b = &mut blocks[i];
        let old = b.size();
        while b.keep > b.min_body && total - old + b.size() > budget_blocks {
            b.keep -= 1;
        }
        if total - old + b.size() > budget_blocks {
            b.dropped = true;
        } else {
            // Shrunk enough: this block stays as it is.
            b.rank = KEEP;
        }
        total = total - old + b.size();
        if b.dropped {
            b.rank = KEEP;
        }
    }
    total
}

/// Lines of at least this many characters (trimmed) are said once per prompt.
const LONG_LINE: usize = 40;

/// The budget goes to facts, each said once: in block order, a fenced block
/// whose text was already shown becomes one line saying so, and a run of
/// long lines (`LONG_LINE`) already shown outside fences becomes one line
/// counting them. The first showing stays where it was.
fn dedupe(blocks: &mut [Block]) {
    let mut fences = std::collections::HashSet::new();
    let mut lines = std::collections::HashSet::new();
    for b in blocks.iter_mut() {
        let mut out: Vec<String> = Vec::with_capacity(b.body.len());
        let mut i = 0;
        let mut repeated = 0;
        let flush = |out: &mut Vec<String>, repeated: &mut usize, indent: &str| {
            if *repeated > 0 {
                out.push(format!("{indent}[... {} line{} as shown above]", repeated, plural(*repeated)));
                *repeated = 0;
            }
        };
        while i < b.body.len() {
            let line = &b.body[i];
            let indent = &line[..line.len() - line.trim_start().len()];
            if line.trim_start().starts_with("```") {
                let close = (i + 1..b.body.len()).find(|&j| b.body[j].trim_start().starts_with("```"));
                let end = close.unwrap_or(b.body.len() - 1);
                let text: Vec<&str> = b.body[i + 1..close.unwrap_or(b.body.len())].iter().map(|l| l.trim()).collect();
                let text = text.join("\n");
                flush(&mut out, &mut repeated, indent);
                if close.is_some() && !text.trim().is_empty() && !fences.insert(text) {
                    let n = end - i - 1;
                    out.push(format!("{indent}[the same {n} line{} as shown above]", plural(n)));
                } else {
                    out.extend(b.body[i..=end].iter().cloned());
                }
                i = end + 1;
                continue;
            }
            let t = line.trim();
            if t.len() >= LONG_LINE && !lines.insert(t.to_string()) {
                repeated += 1;
            } else {
                flush(&mut out, &mut repeated, indent);
                out.push(line.clone());
            }
            i += 1;
        }
        let indent = b.body.last().map(|l| l[..l.len() - l.trim_start().len()].to_string()).unwrap_or_default();
        flush(&mut out, &mut repeated, &indent);
        b.keep = out.len();
        b.min_body = b.min_body.min(out.len());
        b.body = out;
    }
}

/// What went wrong in `ctx`'s previous attempt, as the prompt would say it
/// (its feedback and its errors, not its heading, history or diff), in at
/// most `max_tokens`: the answer of a self-check (docs/mcp.md).
pub(crate) fn what_went_wrong(ctx: &Context, max_tokens: usize) -> String {
    let Some(prev) = &ctx.previous else { return String::new() };
    let mut blocks = what_went_wrong_blocks(prev);
    dedupe(&mut blocks);
    fit(&mut blocks, max_tokens * BYTES_PER_TOKEN);
    let body: String = blocks.iter().flat_map(Block::lines).map(|l| l + "\n").collect();
    body.trim_start_matches('\n').to_string()
}

/// What went wrong in `prev`: its feedback, then the errors in its code.
fn what_went_wrong_blocks(prev: &super::Previous) -> Vec<Block> {
    let mut out = Vec::new();
    if !prev.feedback.is_empty() {
        out.push(Block::new("feedback heading", KEEP, vec![String::new(), "### What went wrong".into()], Vec::new()));
        for (i, f) in prev.feedback.iter().enumerate() {
            out.push(feedback_block(i + 1, f));
        }
    }
    if !prev.errors.is_empty() {
        let mut body = Vec::new();
        // Errors that share a snippet (several diagnostics in one function)
        // are listed together above it, shown once; an error said twice is
        // said once.
        let mut groups: Vec<(Option<&str>, Vec<String>)> = Vec::new();
        for e in &prev.errors {
            let at = match e.line {
                Some(l) => format!("{}:{l}", e.path),
                None => e.path.clone(),
            };
            let code = e.code.as_ref().map(|c| format!(" {c}")).unwrap_or_default();
            let scope = e.scope.as_ref().map(|s| format!(" (in `{s}`)")).unwrap_or_default();
            let line = format!("- `{at}` {}{code}: {}{scope}", e.tool, e.message);
            let snippet = e.snippet.as_deref();
            if groups.iter().any(|(s, lines)| *s == snippet && lines.contains(&line)) {
                continue;
            }
            match groups.iter_mut().find(|(s, _)| snippet.is_some() && *s == snippet) {
                Some((_, lines)) => lines.push(line),
                None => groups.push((snippet, vec![line])),
            }
        }
        for (snippet, lines) in groups {
            body.extend(lines);
            if let Some(snippet) = snippet {
                body.push("```".into());
                body.extend(snippet.lines().map(str::to_string));
                body.push("```".into());
            }
        }
        let mut b = Block::new(
            "errors in their code",
            50,
            vec![String::new(), "### Errors in their code (as the attempt left the files)".into()],
            body,
        );
        b.min_body = 1;
        out.push(b);
    }
    out
}

/// The previous attempt's diff is kept whole, and cut only after every
/// diagnostic, when it has at most this many lines...
pub(crate) const WHOLE_DIFF_LINES: usize = 80;
/// ...and at most this many bytes, and half the budget.
pub(crate) const WHOLE_DIFF_BYTES: usize = 6 * 1024;

fn blocks(ctx: &Context, prev: &super::Previous, budget: usize) -> Vec<Block> {
    if let Some(lead) = ctx.leading() {
        return rejected_blocks(ctx, lead, prev, budget);
    }
    let mut out = heading_blocks(ctx, prev);
    out.extend(what_went_wrong_blocks(prev));
    if !ctx.rejections.is_empty() {
        out.push(Block::new(
            "rejections heading",
            KEEP,
            vec![String::new(), "### Reviewers' rejections of this task's results (latest first)".into()],
            Vec::new(),
        ));
        for (i, r) in ctx.rejections.iter().enumerate() {
            out.extend(rejection_blocks(r, i));
        }
    }
    if !ctx.patterns.is_empty() {
        let body = ctx.patterns.iter().map(|p| format!("- {} {}", p.observation, p.suggestion)).collect();
        out.push(Block::new(
            "patterns",
            30,
            vec![String::new(), "### Patterns across attempts (observations)".into()],
            body,
        ));
    }
    if !ctx.attempts.is_empty() {
        out.extend(history_blocks(ctx, prev));
    }
    out.extend(diff_block(prev, budget, format!("### Diff of attempt {}", prev.number)));
    out
}

/// The first prompt of a round after a rejection: the rejection in the
/// seeds' shape, the judged attempt's diff, the earlier rejections.
fn rejected_blocks(ctx: &Context, lead: &Rejection, prev: &super::Previous, budget: usize) -> Vec<Block> {
    let mut head = vec![
        format!("## ATTEMPT #{} — previous attempt rejected", ctx.attempt),
        String::new(),
        format!("**Required change:** {}", lead.required_change),
        String::new(),
        format!(
            "Attempt {} (commit {}) was rejected by {} {}.",
            lead.attempt,
            short(&lead.commit),
            lead.by,
            where_said(lead)
        ),
    ];
    if let Some(k) = lead.repeats {
        head.push(format!(
            "Attempt {k} was rejected with the same required change, and it was not acted on: make this change now."
        ));
    }
    let mut out = vec![Block::new("heading", KEEP, head, Vec::new())];
    if !lead.critique.is_empty() {
        let mut b = Block::new(
            "reviewer critique",
            93,
            vec![String::new(), format!("**Reviewer critique** ({}, verbatim):", lead.by)],
            quoted(&lead.critique, ""),
        )
        .limited(lead.critique_omitted, "max_verifier_feedback_chars");
        b.min_body = 3.min(b.body.len());
        out.push(b);
    }
    if !lead.comments.is_empty() {
        let mut body = Vec::new();
        for c in &lead.comments {
            body.extend(comment_lines(c, ""));
            if !c.lines.is_empty() {
                body.push("  ```diff".into());
                body.extend(c.lines.iter().map(|l| format!("  {l}")));
                body.push("  ```".into());
            }
        }
        out.push(Block::new("line comments", 92, vec![String::new(), "**Line comments:**".into()], body));
    }
    if !lead.failures.is_empty() || !lead.output.is_empty() {
        let mut body: Vec<String> = lead.failures.iter().map(|f| format!("- {f}")).collect();
        if !lead.output.is_empty() {
            body.push("```".into());
            body.extend(lead.output.iter().cloned());
            body.push("```".into());
        }
        let from = lead.source.as_ref().map(|s| format!(" (from {s})")).unwrap_or_default();
        let mut b = Block::new("review failures", 91, vec![String::new(), format!("**Failures**{from}:")], body);
        b.min_body = 3.min(b.body.len());
        out.push(b);
    }
    if prev.number == lead.attempt {
        out.extend(diff_block(prev, budget, format!("### Diff of attempt {} (you may start from it)", prev.number)));
    }
    if ctx.rejections.len() > 1 {
        out.push(Block::new(
            "rejections heading",
            KEEP,
            vec![String::new(), "### Earlier rejections (latest first)".into()],
            Vec::new(),
        ));
        for (i, r) in ctx.rejections.iter().enumerate().skip(1) {
            out.extend(rejection_blocks(r, i));
        }
    }
    out
}

/// One rejection in a list of them: its line with the required change
/// (never cut), then its critique, comments and failures (cut after every
/// other cuttable block, the oldest first).
fn rejection_blocks(r: &Rejection, i: usize) -> Vec<Block> {
    let again = r.repeats.map(|k| format!(" (the same as attempt {k}'s: not acted on)")).unwrap_or_default();
    let line = format!(
        "- Attempt {} (by {}, {}): Required change: {}{again}",
        r.attempt,
        r.by,
        where_said(r),
        r.required_change
    );
    let mut out = vec![Block::new(format!("rejection of attempt {}", r.attempt), KEEP, vec![line], Vec::new())];
    let mut body = Vec::new();
    if !r.critique.is_empty() {
        body.push("  - Critique (verbatim):".to_string());
        body.extend(quoted(&r.critique, "    "));
    }
    for c in &r.comments {
        body.extend(comment_lines(c, "  "));
    }
    if !r.failures.is_empty() {
        body.push(format!("  - Failures: {}", r.failures.join("; ")));
    }
    if !body.is_empty() {
        let rank = 82u8.saturating_sub(i.min(10) as u8);
        let mut b = Block::new(format!("critique of attempt {}", r.attempt), rank, Vec::new(), body)
            .limited(r.critique_omitted, "max_verifier_feedback_chars");
        b.min_body = 1;
        out.push(b);
    }
    out
}

/// A comment's first line (`- `path:10-12`: text`), its text's further
/// lines indented under it.
fn comment_lines(c: &super::rejections::CommentItem, indent: &str) -> Vec<String> {
    let by = c.by.as_ref().map(|b| format!(" ({b})")).unwrap_or_default();
    let mut text = c.text.lines();
    let mut out = vec![format!("{indent}- `{}`{by}: {}", c.place, text.next().unwrap_or(""))];
    out.extend(text.map(|l| format!("{indent}  {l}")));
    out
}

/// Lines quoted as Markdown does (`> `), an empty one as `>`.
fn quoted(lines: &[String], indent: &str) -> Vec<String> {
    lines.iter().map(|l| if l.is_empty() { format!("{indent}>") } else { format!("{indent}> {l}") }).collect()
}

/// Where a rejection was said, in words.
fn where_said(r: &Rejection) -> String {
    let how = match r.channel.as_str() {
        "log" => "from a CI log",
        "github-pr" => "on a pull request",
        "file" => "in a review file",
        "ui" => "in the web view",
        "land" => "when it was landed",
        _ => "in review",
    };
    match &r.source {
        Some(s) => format!("{how}, {s}"),
        None => how.to_string(),
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(7)]
}

/// The heading with the required change, and the near miss's offer of
/// its diff.
fn heading_blocks(ctx: &Context, prev: &super::Previous) -> Vec<Block> {
    let mut out = Vec::new();
    let req = &prev.required_change;
    let required = if req.advisory {
        format!("**Required change** (the reviewer's words, advisory): \"{}\"", req.text)
    } else {
        format!("**Required change:** {}", req.text)
    };
    out.push(Block::new(
        "heading",
        KEEP,
        vec![
            format!("## Attempt {} of {}: the previous attempt failed", ctx.attempt, ctx.max_attempts),
            String::new(),
            required,
            String::new(),
            format!("Attempt {} ended with {}: {}.", prev.number, prev.outcome.as_str(), prev.reason),
        ],
        Vec::new(),
    ));
    let no_diff = prev.near_miss.is_some() && prev.diff.is_empty() && prev.diff_omitted == 0;
    if let Some(near) = prev.near_miss.as_ref().filter(|_| !no_diff) {
        out.push(Block::new(
            "near miss",
            KEEP,
            vec![
                String::new(),
                format!("{near}. You may start from its diff (below): apply it, then change only what is named here."),
            ],
            Vec::new(),
        ));
    }
    out
}

/// The earlier attempts, most recent first, each ranked below the next
/// more recent one; a required change already said is referred to.
fn history_blocks(ctx: &Context, prev: &super::Previous) -> Vec<Block> {
    let mut out = Vec::new();
    out.push(Block::new("history heading", KEEP, vec![String::new(), "### Earlier attempts".into()], Vec::new()));
    let n = ctx.attempts.len();
    for (i, a) in ctx.attempts.iter().enumerate() {
        // Most recent first; the oldest is cut first.
        let rank = if i == 0 { 60 } else { 10u8.saturating_add((n - i).min(19) as u8) };
        // A required change already said (at the top, or for a later
        // attempt) is referred to, not said again.
        let said = if a.number == prev.number && a.required_change == prev.required_change.text {
            Some("as above".to_string())
        } else {
            ctx.attempts[..i]
                .iter()
                .find(|later| later.required_change == a.required_change)
                .map(|later| format!("the same as attempt {}'s", later.number))
        };
        out.push(history_block(a, rank, i == 0, said));
    }
    if ctx.attempts_omitted > 0 {
        out.push(Block::new(
            "history omitted",
            KEEP,
            vec![format!(
                "- [... {} earlier attempt{} omitted (max_prior_attempts)]",
                ctx.attempts_omitted,
                plural(ctx.attempts_omitted)
            )],
            Vec::new(),
        ));
    }
    out
}

/// The previous attempt's diff under `heading`, kept whole when short.
fn diff_block(prev: &super::Previous, budget: usize, heading: String) -> Option<Block> {
    if prev.diff.is_empty() && prev.diff_omitted == 0 {
        return None;
    }
    let mut body = vec!["```diff".to_string()];
    body.extend(prev.diff.iter().cloned());
    body.push("```".into());
    let bytes: usize = body.iter().map(|l| l.len() + 1).sum();
    let whole =
        prev.diff_omitted == 0 && prev.diff.len() <= WHOLE_DIFF_LINES && bytes <= WHOLE_DIFF_BYTES.min(budget / 2);
    let mut b = Block::new(
        format!("diff of attempt {}", prev.number),
        // A short diff is kept whole before any diagnostic; a near
        // miss's diff is worth more than long diagnostic lists.
        if whole {
            90
        } else if prev.near_miss.is_some() {
            75
        } else {
            35
        },
        vec![String::new(), heading],
        body,
    )
    .limited(prev.diff_omitted, "max_diff_lines");
    if whole {
        b.min_body = b.body.len();
    }
    Some(b)
}

fn feedback_block(n: usize, f: &Feedback) -> Block {
    let label = match f.label {
        Label::Fact => "fact",
        Label::Advisory => "advisory",
        Label::Observation => "observation",
    };
    let rank = match (f.priority, f.label) {
        (3, _) | (_, Label::Advisory) => 40,
        (4, _) => 30,
        _ => 70,
    };
    let mut body: Vec<String> = f.lines.iter().map(|l| format!("   {l}")).collect();
    if !f.output.is_empty() {
        body.push("   ```".into());
        body.extend(f.output.iter().map(|l| format!("   {l}")));
        body.push("   ```".into());
    }
    let mut b =
        Block::new(f.source.clone(), rank, vec![String::new(), format!("{n}. **{}** ({label})", f.title)], body)
            .limited(f.omitted, "max_check_output_lines");
    b.min_body = 3.min(b.body.len());
    b
}

fn history_block(a: &PriorAttempt, rank: u8, most_recent: bool, said: Option<String>) -> Block {
    let head =
        vec![format!("- Attempt {} ({}): {}: {}.", a.number, human_ms(a.duration_ms), a.outcome.as_str(), a.reason)];
    let mut body = vec![format!("  - Required change: {}", said.as_deref().unwrap_or(&a.required_change))];
    if !a.checks.is_empty() {
        let list: Vec<String> = a
            .checks
            .iter()
            .map(|c| {
                let state = if c.flaky {
                    "passed (flaky)".to_string()
                } else if c.passed {
                    "passed".to_string()
                } else if c.timed_out {
                    "TIMEOUT".to_string()
                } else {
                    match c.exit_code {
                        Some(code) => format!("failed (exit code {code})"),
                        None => "failed".to_string(),
                    }
                };
                let pre = if c.pre_existing > 0 { format!(", {} pre-existing", c.pre_existing) } else { String::new() };
                format!("{} {state}{pre}", c.name)
            })
            .collect();
        body.push(format!("  - Checks: {}", list.join("; ")));
    }
    if let Some(v) = &a.verifier {
        let what = v.required_change.as_ref().map(|r| format!(": \"{r}\"")).unwrap_or_default();
        body.push(format!(
            "  - Reviewer (advisory): {} (confidence {:.2}){what}",
            v.verdict.as_deref().unwrap_or("no verdict"),
            v.confidence.unwrap_or(1.0)
        ));
    }
    if !a.files.is_empty() {
        let files: Vec<String> = a.files.iter().take(10).map(|f| format!("`{f}`")).collect();
        let more = if a.files.len() > 10 { format!(" and {} more", a.files.len() - 10) } else { String::new() };
        body.push(format!("  - Files: {}{more} ({})", files.join(", "), a.diff_summary));
    } else {
        body.push(format!("  - Files: {}", a.diff_summary));
    }
    if !most_recent {
        // The most recent attempt's check output is above, in full.
        for c in a.checks.iter().filter(|c| !c.excerpt.is_empty()) {
            body.push(format!("  - `{}` output:", c.name));
            body.extend(c.excerpt.iter().map(|l| format!("    {l}")));
            if c.omitted > 0 {
                body.push(format!("    [... {} lines omitted]", c.omitted));
            }
        }
    }
    Block::new(format!("attempt {}", a.number), rank, head, body)
}
