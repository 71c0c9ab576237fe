//! Where a run of a task resumes, from what its record says: the window of
//! attempt numbers it may use, and the base it works on. Pure.

/// What the record says of a task so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SoFar {
    /// A `TaskStarted` was recorded.
    pub started: bool,
    /// The latest round ended (succeeded or escalated).
    pub ended: bool,
    /// The first attempt of the latest round.
    pub first_attempt: u32,
    /// The highest attempt number started (0 for none).
    pub last_attempt: u32,
    /// Attempts of the latest round that were aborted before their agent
    /// ran (their worktree could not be prepared, their agent could not
    /// start): they spend no attempt of the budget.
    pub aborted: u32,
}

/// The attempt numbers a run may use: `first..=last`, starting at `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// The round's first attempt (it counts against `max_attempts`).
    pub first: u32,
    /// The round's last allowed attempt; never before `next`.
    pub last: u32,
    /// The next attempt to run.
    pub next: u32,
    /// A new round starts (not a resumed one).
    pub new_round: bool,
}

/// The window of a run: a new round (first run, `--again`, or a round that
/// ended) starts after the last attempt; an unfinished round resumes where
/// it stopped, within its own budget of `max_attempts` (widened by its
/// aborted attempts, which spent none of it).
pub(crate) fn window(so_far: SoFar, again: bool, max_attempts: u32) -> Window {
    let next = so_far.last_attempt + 1;
    let new_round = !so_far.started || again || so_far.ended;
    let first = if new_round { next } else { so_far.first_attempt };
    let aborted = if new_round { 0 } else { so_far.aborted };
    let last = first + max_attempts.max(1) - 1 + aborted;
    Window { first, last, next: next.max(first), new_round }
}

/// Which base a run works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BaseChoice {
    /// The base the task recorded at its start.
    Recorded(String),
    /// The revision `--base` names.
    Flag(String),
    /// The revision the config's `base` names.
    Config(String),
    /// The user's checkout as it is: the commit HEAD points at (a branch
    /// or a detached HEAD).
    Head,
}

/// The base is recorded once per task and kept, unless `--refresh-base`
/// asks for a new one; a new one is `--base`, else the config's `base`,
/// else the checkout's HEAD.
pub(crate) fn choose_base(
    recorded: Option<&str>,
    refresh: bool,
    flag: Option<&str>,
    config: Option<&str>,
) -> BaseChoice {
    match (recorded, flag, config) {
        (Some(b), ..) if !refresh => BaseChoice::Recorded(b.to_string()),
        (_, Some(f), _) => BaseChoice::Flag(f.to_string()),
        (_, None, Some(c)) => BaseChoice::Config(c.to_string()),
        _ => BaseChoice::Head,
    }
}

/// A commit as the first line of a run names it: the branch that points
/// at it, when one does, and its short id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Named<'a> {
    pub branch: Option<&'a str>,
    pub short: &'a str,
}

impl Named<'_> {
    fn text(&self) -> String {
        match self.branch {
            Some(b) => format!("{b} ({})", self.short),
            None => format!("{} (detached HEAD)", self.short),
        }
    }
}

/// The first line of a run of task `id`: its base, where it came from, and
/// the checkout's HEAD when the base is a configured or given revision
/// other than it (said once, here). Pure.
pub(crate) fn base_line(id: &str, choice: &BaseChoice, base: Named<'_>, head: Option<Named<'_>>) -> String {
    let what = match base.branch {
        Some(b) => format!("{b} ({})", base.short),
        None => base.short.to_string(),
    };
    let from = match choice {
        BaseChoice::Recorded(_) => "as recorded when the task started".to_string(),
        BaseChoice::Flag(spec) => format!("from --base {spec}"),
        BaseChoice::Config(spec) => format!("from base = \"{spec}\" in the config"),
        BaseChoice::Head => match base.branch {
            Some(_) => "the checked-out HEAD".to_string(),
            None => "the detached HEAD".to_string(),
        },
    };
    let other_head = match (choice, head) {
        (BaseChoice::Flag(_) | BaseChoice::Config(_), Some(h)) if h.short != base.short => {
            format!("; HEAD is {}, which the attempts do not start from", h.text())
        }
        _ => String::new(),
    };
    format!("task {id}: base {what}, {from}{other_head}")
}

/// The command that runs task `id` again, as a shell reads it: `retry-run
/// run --id ID`, then `extra` (`--again`), then the words the first run
/// was given that it needs again (`args`, the agent after `--` among them),
/// each quoted when the shell would split or expand it. Pure.
pub(crate) fn resume_command(id: &str, extra: &[&str], args: &[String]) -> String {
    let mut words: Vec<String> = ["retry-run", "run", "--id", id].iter().map(|w| sh_word(w)).collect();
    words.extend(extra.iter().map(|w| sh_word(w)));
    words.extend(args.iter().map(|w| sh_word(w)));
    words.join(" ")
}

/// `w` as one shell word.
fn sh_word(w: &str) -> String {
    let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { w.to_string() } else { format!("'{}'", w.replace('\'', "'\\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn so_far(started: bool, ended: bool, first_attempt: u32, last_attempt: u32) -> SoFar {
        SoFar { started, ended, first_attempt, last_attempt, aborted: 0 }
    }

    #[test]
    fn windows() {
        // (record so far, --again, max attempts) -> (first, last, next, new round)
        let cases = [
            (so_far(false, false, 0, 0), false, 3, (1, 3, 1, true)),
            // killed during attempt 2 of 1..=3: resume at 3 within the round
            (so_far(true, false, 1, 2), false, 3, (1, 3, 3, false)),
            // resumed with a smaller budget: nothing left to run
            (so_far(true, false, 1, 3), false, 2, (1, 2, 4, false)),
            // ended at 2: a new round starts at 3
            (so_far(true, true, 1, 2), false, 3, (3, 5, 3, true)),
            // --again on a round under way starts a new one
            (so_far(true, false, 1, 1), true, 2, (2, 3, 2, true)),
            // attempt 2 of 1..=3 aborted (its agent could not start): 1..=4, resumed at 3
            (SoFar { aborted: 1, ..so_far(true, false, 1, 2) }, false, 3, (1, 4, 3, false)),
            // an aborted attempt of an ended round widens no new one
            (SoFar { aborted: 1, ..so_far(true, true, 1, 2) }, false, 3, (3, 5, 3, true)),
        ];
        for (s, again, max, (first, last, next, new_round)) in cases {
            assert_eq!(window(s, again, max), Window { first, last, next, new_round }, "{s:?} again={again} max={max}");
        }
    }

    #[test]
    fn a_resume_command_as_a_shell_reads_it() {
        let args: Vec<String> = ["--target", "t::a b", "--", "sh", "-c", "my-agent --prompt {prompt_file}", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            resume_command("fix-1", &["--again"], &args),
            "retry-run run --id fix-1 --again --target 't::a b' -- sh -c 'my-agent --prompt {prompt_file}' 'it'\\''s'"
        );
        assert_eq!(resume_command("t", &[], &[]), "retry-run run --id t");
    }

    #[test]
    fn bases() {
        use BaseChoice::*;
        let cases = [
            (Some("abc"), false, Some("main"), None, Recorded("abc".into())),
            (Some("abc"), true, Some("main"), Some("dev"), Flag("main".into())),
            (Some("abc"), true, None, Some("dev"), Config("dev".into())),
            (Some("abc"), true, None, None, Head),
            (None, false, Some("main"), Some("dev"), Flag("main".into())),
            (None, false, None, None, Head),
        ];
        for (recorded, refresh, flag, config, want) in cases {
            assert_eq!(
                choose_base(recorded, refresh, flag, config),
                want,
                "{recorded:?} {refresh} {flag:?} {config:?}"
            );
        }
    }

    #[test]
    fn the_line_that_names_the_base() {
        let feature = Named { branch: Some("feature"), short: "1111111" };
        let main = Named { branch: Some("main"), short: "2222222" };
        let detached = Named { branch: None, short: "3333333" };
        let cases = [
            (BaseChoice::Head, feature, Some(feature), "task t: base feature (1111111), the checked-out HEAD"),
            (BaseChoice::Head, detached, Some(detached), "task t: base 3333333, the detached HEAD"),
            (
                BaseChoice::Flag("main".into()),
                main,
                Some(feature),
                "task t: base main (2222222), from --base main; HEAD is feature (1111111), which the attempts do not start from",
            ),
            (
                BaseChoice::Config("main".into()),
                main,
                Some(detached),
                "task t: base main (2222222), from base = \"main\" in the config; HEAD is 3333333 (detached HEAD), which the attempts do not start from",
            ),
            (BaseChoice::Flag("main".into()), main, Some(main), "task t: base main (2222222), from --base main"),
            (
                BaseChoice::Recorded("2222222aaaa".into()),
                main,
                Some(feature),
                "task t: base main (2222222), as recorded when the task started",
            ),
        ];
        for (choice, base, head, want) in cases {
            assert_eq!(base_line("t", &choice, base, head), want);
        }
    }
}
