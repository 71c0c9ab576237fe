//! What would act after the change lands: files that git, editors, CI,
//! shells and coding agents execute or honour once the change is merged
//! (docs/sandbox.md, "What would act after the land").
//!
//! Pure. [`TABLE`] is the one list of such files, matched with the
//! scope's glob rules (case-insensitively: a checkout on a case-insensitive
//! filesystem honours `.GitAttributes` too). [`check`] judges a change set
//! against it under `[scope] acts_after_land` ([`LandGate`]); an allow glob
//! that matches the path and spells out the entry's name lifts it.
//! `.gitmodules` is read as text here, never handed to git.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::LazyLock;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};

use super::{Subject, Violation, normalize_glob};
use crate::model::{Change, EntryKind, LandGate, ScopeReason, Status};

/// What kind of entry a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// Judged as `[scope] acts_after_land` says.
    Acts,
    /// `.gitmodules`: judged as [`RowKind::Acts`], and a command in it
    /// (`update = !cmd`, an `ext::` or `-` URL) is lifted by no allow glob.
    Gitmodules,
    /// retry-run's own config: outside the scope in every mode, lifted
    /// only by an allow glob naming it.
    Config,
}

/// One entry of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LandingRow {
    /// The paths it names (the scope's glob rules, any case).
    pub glob: &'static str,
    /// What an allow glob must spell out (any case) to lift it.
    pub name: &'static str,
    /// Who executes or honours it, once the change lands.
    pub who: &'static str,
    pub kind: RowKind,
}

const fn acts(glob: &'static str, name: &'static str, who: &'static str) -> LandingRow {
    LandingRow { glob, name, who, kind: RowKind::Acts }
}

const ATTRIBUTES: &str = "git: the filter, diff and merge drivers it names run on checkout, diff and merge, and its attributes change how the change is shown (`-diff`, `linguist-generated`)";
const VSCODE: &str = "VS Code: tasks run on opening the folder (`runOn: folderOpen`), and settings and launch configurations name the programs it runs";
const DEVCONTAINER: &str =
    "dev containers (VS Code, Codespaces): the image, and the commands run on creating and starting the container";
const ACTIONS: &str =
    "GitHub Actions: run on pushes, pull requests and schedules once merged, with the repository's secrets";
const OWNERS: &str = "GitHub and GitLab: who must review a change";
const LEFTHOOK: &str = "lefthook: git hooks run on commit and push";
const MISE: &str = "mise: its hooks, tasks and environment run when a shell enters the directory";
const CLAUDE: &str = "Claude Code: hooks (commands run on its events), permissions and MCP servers";
const CARGO: &str = "cargo: runners, wrappers and aliases used by every cargo command";
const TOOLCHAIN: &str = "rustup: the toolchain every cargo and rustc command runs";
const WOODPECKER: &str = "Woodpecker CI: pipelines run on pushes once merged";
const AZURE: &str = "Azure Pipelines: pipelines run on pushes once merged";
const APPVEYOR: &str = "AppVeyor: builds run on pushes once merged";

/// Every file that acts once the change lands, in one place. The docs'
/// table (docs/sandbox.md) lists the same rows; a test holds them equal.
pub const TABLE: &[LandingRow] = &[
    // git
    acts("**/.gitattributes", ".gitattributes", ATTRIBUTES),
    LandingRow {
        glob: ".gitmodules",
        name: ".gitmodules",
        who: "git: `git submodule update` fetches each submodule from its URL and updates it as it says",
        kind: RowKind::Gitmodules,
    },
    acts(".lfsconfig", ".lfsconfig", "Git LFS: the server it fetches from and pushes to, on checkout and push"),
    // shells
    acts("**/.envrc", ".envrc", "direnv: runs it as shell code when a shell enters the directory"),
    acts(
        "**/.tool-versions",
        ".tool-versions",
        "asdf and mise: the tools (and plugins) installed and run in the directory",
    ),
    acts("**/mise.toml", "mise.toml", MISE),
    acts("**/.mise.toml", ".mise.toml", MISE),
    // editors
    acts("**/.vscode/**", ".vscode", VSCODE),
    acts("**/*.code-workspace", ".code-workspace", VSCODE),
    acts("**/.idea/**", ".idea", "JetBrains IDEs: run configurations and the tasks run on opening the project"),
    acts("**/.devcontainer/**", ".devcontainer", DEVCONTAINER),
    acts("**/.devcontainer.json", ".devcontainer.json", DEVCONTAINER),
    // CI
    acts(".github/workflows/**", ".github/workflows", ACTIONS),
    acts(".github/actions/**", ".github/actions", ACTIONS),
    acts(
        "action.yml",
        "action.yml",
        "GitHub Actions: this repository's own action, run by every workflow that uses it",
    ),
    acts(
        "action.yaml",
        "action.yaml",
        "GitHub Actions: this repository's own action, run by every workflow that uses it",
    ),
    acts("CODEOWNERS", "CODEOWNERS", OWNERS),
    acts(".github/CODEOWNERS", "CODEOWNERS", OWNERS),
    acts("docs/CODEOWNERS", "CODEOWNERS", OWNERS),
    acts(".gitlab/CODEOWNERS", "CODEOWNERS", OWNERS),
    acts(".gitlab-ci.yml", ".gitlab-ci.yml", "GitLab CI: pipelines run on pushes and merge requests once merged"),
    acts(".circleci/**", ".circleci", "CircleCI: pipelines run on pushes once merged"),
    acts("**/Jenkinsfile", "Jenkinsfile", "Jenkins: the pipeline run on pushes once merged"),
    acts("azure-pipelines.yml", "azure-pipelines", AZURE),
    acts("azure-pipelines.yaml", "azure-pipelines", AZURE),
    acts(".azure-pipelines/**", ".azure-pipelines", AZURE),
    acts(".travis.yml", ".travis.yml", "Travis CI: builds run on pushes once merged"),
    acts(".buildkite/**", ".buildkite", "Buildkite: pipelines run on pushes once merged"),
    acts(
        "bitbucket-pipelines.yml",
        "bitbucket-pipelines.yml",
        "Bitbucket Pipelines: pipelines run on pushes once merged",
    ),
    acts(".drone.yml", ".drone.yml", "Drone: pipelines run on pushes once merged"),
    acts(".woodpecker.yml", ".woodpecker", WOODPECKER),
    acts(".woodpecker.yaml", ".woodpecker", WOODPECKER),
    acts(".woodpecker/**", ".woodpecker", WOODPECKER),
    acts("appveyor.yml", "appveyor.yml", APPVEYOR),
    acts(".appveyor.yml", "appveyor.yml", APPVEYOR),
    // git hooks
    acts(
        ".pre-commit-config.yaml",
        ".pre-commit-config.yaml",
        "pre-commit: hooks run on every commit of whoever installed them",
    ),
    acts(
        ".pre-commit-hooks.yaml",
        ".pre-commit-hooks.yaml",
        "pre-commit: the hooks this repository offers to others' commits",
    ),
    acts("**/.husky/**", ".husky", "husky: git hooks run on commit and push, installed by `npm install`"),
    acts(".githooks/**", ".githooks", "git hooks kept in the repository (`core.hooksPath`), run on commit and push"),
    acts("lefthook.yml", "lefthook", LEFTHOOK),
    acts("lefthook.yaml", "lefthook", LEFTHOOK),
    acts(".lefthook.yml", "lefthook", LEFTHOOK),
    acts(".lefthook.yaml", "lefthook", LEFTHOOK),
    acts("lefthook-local.yml", "lefthook", LEFTHOOK),
    acts(".lefthook/**", "lefthook", LEFTHOOK),
    // package tools that run what their config names
    acts("**/.npmrc", ".npmrc", "npm: the registry it installs from, and the shell and options its scripts run with"),
    acts("**/.yarnrc.yml", ".yarnrc.yml", "Yarn: `yarnPath` is a script run for every yarn command"),
    acts("**/.pnpmfile.cjs", ".pnpmfile.cjs", "pnpm: run on every install"),
    acts("**/.cargo/config.toml", ".cargo/config", CARGO),
    acts("**/.cargo/config", ".cargo/config", CARGO),
    acts("**/rust-toolchain", "rust-toolchain", TOOLCHAIN),
    acts("**/rust-toolchain.toml", "rust-toolchain", TOOLCHAIN),
    // coding agents
    acts("**/.claude/settings.json", ".claude/settings", CLAUDE),
    acts("**/.claude/settings.local.json", ".claude/settings", CLAUDE),
    acts(".mcp.json", ".mcp.json", "Claude Code: the project's MCP servers, commands it starts"),
    acts("**/.gemini/settings.json", ".gemini/settings.json", "Gemini CLI: the MCP servers and tools it runs"),
    acts("**/.cursor/mcp.json", ".cursor/mcp.json", "Cursor: the MCP servers, commands it starts"),
    // retry-run
    LandingRow {
        glob: "retry-run.toml",
        name: "retry-run.toml",
        who: "retry-run: the sandbox, scope, checks and agent of every later run",
        kind: RowKind::Config,
    },
];

/// The largest `.gitmodules` read; a larger one is judged as naming a
/// command.
pub const MAX_GITMODULES: usize = 1 << 20;

/// The gate as a run or `scope` applies it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gate {
    pub mode: LandGate,
    /// Files the run reads its config from besides `retry-run.toml` at the
    /// root (`--config`, `--task-file`, inside the repository),
    /// repository-relative: judged as it is.
    pub config_files: Vec<Vec<u8>>,
}

/// The change's findings: violations (`fail`, and the config file in every
/// mode) and flags (`flag`), one per path at most, reason
/// [`ScopeReason::ActsAfterLand`]. `rule` is the row's glob, or for a
/// command in `.gitmodules` [`COMMAND`] and the setting.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Landing {
    pub violations: Vec<Violation>,
    pub flagged: Vec<Violation>,
}

/// The start of a finding's rule for a command in `.gitmodules`.
pub const COMMAND: &str = "command in .gitmodules: ";

fn compile(globs: impl Iterator<Item = String>) -> Option<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        let glob = GlobBuilder::new(&normalize_glob(&g))
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(true)
            .build()
            .ok()?;
        set.add(glob);
    }
    set.build().ok()
}

/// The table's globs, compiled once (a test holds them valid).
static GLOBS: LazyLock<Option<GlobSet>> = LazyLock::new(|| compile(TABLE.iter().map(|r| r.glob.to_string())));

/// The directories above each row's paths (`.github`, `.github/workflows`,
/// `**/.vscode`): a symlink there puts other files in the row's place.
static LINK_DIRS: LazyLock<Vec<(String, usize)>> = LazyLock::new(|| {
    let mut out = Vec::new();
    for (i, row) in TABLE.iter().enumerate() {
        let mut g = row.glob.strip_suffix("/**").unwrap_or(row.glob).to_string();
        if g != row.glob {
            out.push((g.clone(), i));
        }
        while let Some(at) = g.rfind('/') {
            g.truncate(at);
            if g.is_empty() || g.chars().all(|c| c == '*') {
                break;
            }
            out.push((g.clone(), i));
        }
    }
    out
});
static LINK_GLOBS: LazyLock<Option<GlobSet>> = LazyLock::new(|| compile(LINK_DIRS.iter().map(|(g, _)| g.clone())));

/// The longest literal piece of each glob (between its wildcards and
/// slashes), which every path the glob names holds, in some case (the
/// globs ignore case). A path that holds none of them is named by none of
/// the globs: it is answered without the compiled set, whose building costs
/// more than matching a thousand changed paths. `None` (every path goes to
/// the set) where a glob has no such piece, or one whose pieces are not
/// literal (a class, alternatives, an escape).
fn anchors<'a>(globs: impl Iterator<Item = &'a str>) -> Option<aho_corasick::AhoCorasick> {
    let mut pieces = Vec::new();
    for g in globs {
        let g = normalize_glob(g);
        if g.contains(['[', ']', '{', '}', '\\']) {
            return None;
        }
        let piece = g.split(['*', '?', '/']).max_by_key(|p| p.len()).filter(|p| !p.is_empty())?;
        pieces.push(piece.to_string());
    }
    aho_corasick::AhoCorasick::builder().ascii_case_insensitive(true).build(pieces).ok()
}

static ANCHORS: LazyLock<Option<aho_corasick::AhoCorasick>> = LazyLock::new(|| anchors(TABLE.iter().map(|r| r.glob)));
static LINK_ANCHORS: LazyLock<Option<aho_corasick::AhoCorasick>> =
    LazyLock::new(|| anchors(LINK_DIRS.iter().map(|(g, _)| g.as_str())));

/// Whether `path` may be named by a glob of `anchors`' set: it holds one of
/// their pieces, or it is not ASCII (Unicode's case folding matches more
/// than ASCII's: `K`, the Kelvin sign, is a `k`).
fn may_match(anchors: &Option<aho_corasick::AhoCorasick>, path: &[u8]) -> bool {
    match anchors {
        Some(ac) => !path.is_ascii() || ac.is_match(path),
        None => true,
    }
}

/// The row naming `path`, if any; `link`: the path is a symlink, which
/// also stands for every file below it.
pub fn row_of(path: &[u8], link: bool) -> Option<&'static LandingRow> {
    let candidate = Candidate::new(OsStr::from_bytes(path));
    if may_match(&ANCHORS, path) {
        let direct = GLOBS.as_ref()?.matches_candidate(&candidate).into_iter().min();
        if let Some(i) = direct {
            return TABLE.get(i);
        }
    }
    if !link || !may_match(&LINK_ANCHORS, path) {
        return None;
    }
    let i = LINK_GLOBS.as_ref()?.matches_candidate(&candidate).into_iter().min()?;
    TABLE.get(LINK_DIRS.get(i)?.1)
}

/// The row a finding's rule names (the row's glob), if any.
pub fn row_by_rule(rule: &str) -> Option<&'static LandingRow> {
    if rule.starts_with(COMMAND) {
        return TABLE.iter().find(|r| r.kind == RowKind::Gitmodules);
    }
    TABLE.iter().find(|r| r.glob == rule)
}

/// Who acts on the file a finding names, and why, as one clause
/// (`GitHub Actions: run on pushes ...`).
pub fn why(rule: Option<&str>) -> String {
    match rule {
        Some(r) if r.starts_with(COMMAND) => {
            format!("`.gitmodules` names a command git would run ({}); no allow glob lifts that", &r[COMMAND.len()..])
        }
        Some(r) => match row_by_rule(r) {
            Some(row) => row.who.to_string(),
            None => "retry-run: a file this run reads its config from (`--config`, or a `--task-file`'s front matter)"
                .to_string(),
        },
        None => "it acts once the change lands".to_string(),
    }
}

/// What lifts a finding, for the user: the allow glob to add (a human's
/// decision), or for a command in `.gitmodules`, the gate's mode.
pub fn how_to_allow(path: &str, rule: Option<&str>) -> String {
    match rule {
        Some(r) if r.starts_with(COMMAND) => {
            "only `[scope] acts_after_land = \"flag\"` or `\"off\"` lets it through".to_string()
        }
        Some(r) => {
            let glob = match row_by_rule(r) {
                Some(row) if row.glob.ends_with("/**") => row.glob.trim_start_matches("**/").to_string(),
                _ => path.to_string(),
            };
            format!("a human allows it by naming it in the task's or the config's `[scope] allow` (`\"{glob}\"`)")
        }
        None => format!("a human allows it by naming it in `[scope] allow` (`\"{path}\"`)"),
    }
}

/// The allow globs of the task's scope that match a path (the scope's
/// rules, [`super::Rules`]).
pub trait AllowGlobs {
    fn allow_globs_matching(&self, path: &[u8]) -> Vec<&str>;
}

/// Whether an allow glob matches `path` and spells out `name` (any case).
fn lifted(rules: &dyn AllowGlobs, path: &[u8], name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    rules.allow_globs_matching(path).iter().any(|g| g.to_ascii_lowercase().contains(&name))
}

/// Judges `changes` (`gitmodules`: the head's `.gitmodules`, read only
/// when a change touches it) against the table under `gate`.
pub fn check(
    gate: &Gate,
    rules: &dyn AllowGlobs,
    changes: &[Change],
    gitmodules: &dyn Fn() -> Option<Vec<u8>>,
) -> Landing {
    let mut out = Landing::default();
    for c in changes {
        let link = c.new.as_ref().is_some_and(|n| n.kind == EntryKind::Symlink);
        let mut sides = vec![(c.path(), Subject::Path, link)];
        if let Some(old) = c.old_path() {
            sides.push((old, Subject::OldPath, false));
        }
        for (path, subject, link) in sides {
            let Some((kind, name, rule)) = judge_path(gate, path, link) else { continue };
            let command = (kind == RowKind::Gitmodules && subject == Subject::Path && c.status != Status::Deleted)
                .then(|| gitmodules().map(|t| gitmodules_commands(&t)).unwrap_or_default())
                .and_then(|found| found.into_iter().next());
            let rule = match &command {
                Some(cmd) => format!("{COMMAND}{cmd}"),
                None if lifted(rules, path, &name) => continue,
                None => rule,
            };
            let v = Violation {
                path: c.path().to_vec(),
                old_path: c.old_path().map(<[u8]>::to_vec),
                status: c.status,
                reason: ScopeReason::ActsAfterLand,
                rule: Some(rule),
                subject,
            };
            match (kind, gate.mode) {
                (RowKind::Config, _) | (_, LandGate::Fail) => out.violations.push(v),
                (_, LandGate::Flag) => out.flagged.push(v),
                (_, LandGate::Off) => {}
            }
            break;
        }
    }
    out
}

/// The row kind, the name an allow glob must spell and the rule of `path`.
fn judge_path(gate: &Gate, path: &[u8], link: bool) -> Option<(RowKind, String, String)> {
    if gate.config_files.iter().any(|f| f.as_slice() == path) {
        let text = String::from_utf8_lossy(path).into_owned();
        let name = text.rsplit('/').next().unwrap_or(&text).to_string();
        return Some((RowKind::Config, name, text));
    }
    let row = row_of(path, link)?;
    if gate.mode == LandGate::Off && row.kind != RowKind::Config {
        return None;
    }
    Some((row.kind, row.name.to_string(), row.glob.to_string()))
}

/// Merges the gate's violations into a scope report: a path's violation of
/// higher precedence stands, `outside-allow` gives way; flags are kept for
/// paths with no violation.
pub fn merge(report: &mut super::Report, landing: Landing) {
    for v in landing.violations {
        match report.violations.iter_mut().find(|o| o.path == v.path) {
            Some(o) if o.reason > v.reason => *o = v,
            Some(_) => {}
            None => report.violations.push(v),
        }
    }
    report.flagged =
        landing.flagged.into_iter().filter(|f| !report.violations.iter().any(|v| v.path == f.path)).collect();
}

/// The settings of a `.gitmodules` that name a command git would run, as
/// written (`update = !sh`, `url = ext::sh -c ...`, `url = -u...`): read as
/// git's config syntax, every section alike (a key's section is not
/// trusted), never handed to git. A file over [`MAX_GITMODULES`] is one
/// finding.
pub fn gitmodules_commands(text: &[u8]) -> Vec<String> {
    if text.len() > MAX_GITMODULES {
        return vec![format!("a .gitmodules of {} bytes, more than retry-run reads", text.len())];
    }
    let mut out = Vec::new();
    for line in logical_lines(text) {
        let Some((key, value)) = setting(&line) else { continue };
        let command = match key.as_str() {
            "url" => url_command(&value),
            "update" => value.starts_with('!'),
            _ => false,
        };
        if command {
            out.push(format!("{key} = {}", shown(&value)));
        }
    }
    out
}

/// A URL git hands to a command or reads as an option: a remote helper
/// (`ext::`, `fd::`, any `<name>::`), a leading `-`, a leading `!`.
fn url_command(url: &str) -> bool {
    if url.starts_with('-') || url.starts_with('!') {
        return true;
    }
    match url.find("::") {
        Some(at) => {
            let helper = &url[..at];
            !helper.is_empty() && helper.chars().all(|c| c.is_ascii_alphanumeric() || "+-._".contains(c))
        }
        None => false,
    }
}

/// Control characters made visible, at most 200 characters kept.
fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(200).map(|c| if c.is_control() { '?' } else { c }).collect();
    if s.chars().nth(200).is_some() {
        out.push_str("...");
    }
    out
}

/// The lines of a config file with `\`-newline continuations joined.
fn logical_lines(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for raw in text.split(|&b| b == b'\n') {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let trailing = line.iter().rev().take_while(|&&b| b == b'\\').count();
        if trailing % 2 == 1 {
            current.extend_from_slice(&line[..line.len() - 1]);
        } else {
            current.extend_from_slice(line);
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A line's key (lowercased) and value, after a section header on the
/// same line if any; `None` for comments, headers alone and keys without
/// a value.
fn setting(line: &[u8]) -> Option<(String, String)> {
    let mut rest = trim_start(line);
    if rest.first() == Some(&b'[') {
        rest = trim_start(after_header(rest)?);
    }
    if matches!(rest.first(), None | Some(b'#') | Some(b';')) {
        return None;
    }
    let key_len = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'-' || **b == b'.').count();
    let key = String::from_utf8_lossy(&rest[..key_len]).to_ascii_lowercase();
    let after = trim_start(&rest[key_len..]);
    let value = after.strip_prefix(b"=")?;
    Some((key.rsplit('.').next().unwrap_or(&key).to_string(), unquote(value)))
}

/// What follows a `[section "sub"]` header; `None` when it does not close.
fn after_header(line: &[u8]) -> Option<&[u8]> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, &b) in line.iter().enumerate().skip(1) {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => quoted = !quoted,
            b']' if !quoted => return line.get(i + 1..),
            _ => {}
        }
    }
    None
}

/// A value as git reads it: quotes removed, escapes read, a comment
/// outside quotes cut, surrounding whitespace trimmed.
fn unquote(value: &[u8]) -> String {
    let mut out = Vec::with_capacity(value.len());
    let mut quoted = false;
    let mut bytes = value.iter();
    while let Some(&b) = bytes.next() {
        match b {
            b'\\' => match bytes.next() {
                Some(b'n') => out.push(b'\n'),
                Some(b't') => out.push(b'\t'),
                Some(b'b') => out.push(8),
                Some(&other) => out.push(other),
                None => {}
            },
            b'"' => quoted = !quoted,
            b'#' | b';' if !quoted => break,
            _ => out.push(b),
        }
    }
    String::from_utf8_lossy(&out).trim().to_string()
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &s[n..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::scope::Rules;
    use crate::model::Side;

    #[test]
    fn the_table_compiles_and_every_row_is_reached() {
        assert!(GLOBS.is_some() && LINK_GLOBS.is_some());
        for row in TABLE {
            // A path the row's glob names, made concrete.
            let path = row.glob.replace("**/", "").replace("/**", "/x").replace('*', "a");
            let got = row_of(path.as_bytes(), false).map(|r| r.glob);
            assert!(got.is_some(), "{path}: no row");
            // An allow glob naming the path itself lifts it.
            assert!(
                path.to_ascii_lowercase().contains(&row.name.to_ascii_lowercase()),
                "{}: the path {path} does not spell the name {}",
                row.glob,
                row.name
            );
        }
    }

    #[test]
    fn the_pieces_pass_every_path_the_globs_name_and_few_others() {
        assert!(ANCHORS.is_some() && LINK_ANCHORS.is_some(), "every glob has a literal piece");
        let compiled = |path: &str, link: bool| {
            let c = Candidate::new(OsStr::new(path));
            let direct = GLOBS.as_ref().expect("globs").matches_candidate(&c).into_iter().min().map(|i| TABLE[i].glob);
            let linked = || {
                let i = LINK_GLOBS.as_ref().expect("link globs").matches_candidate(&c).into_iter().min()?;
                Some(TABLE[LINK_DIRS[i].1].glob)
            };
            direct.or_else(|| if link { linked() } else { None })
        };
        let mut paths: Vec<String> = Vec::new();
        for row in TABLE {
            let path = row.glob.replace("**/", "").replace("/**", "/x").replace('*', "a");
            paths.extend([path.clone(), path.to_uppercase(), format!("deep/er/{path}"), format!("{path}/below")]);
        }
        for (dir, _) in LINK_DIRS.iter() {
            paths.extend([dir.replace("**/", ""), dir.replace("**/", "web/").to_uppercase()]);
        }
        // The Kelvin sign folds to `k`, the long s to `s`: not ASCII, so the set decides.
        paths.extend(["Jen\u{212a}insfile".to_string(), "ci/.envrc".to_string(), ".\u{17f}ome".to_string()]);
        for path in &paths {
            for link in [false, true] {
                assert_eq!(row_of(path.as_bytes(), link).map(|r| r.glob), compiled(path, link), "{path} (link {link})");
            }
        }
        for ordinary in ["src/m00/s00/f00.py", "docs/new/n001.md", "tests/moved/r000_f07.py", "README.md"] {
            assert!(!may_match(&ANCHORS, ordinary.as_bytes()), "{ordinary}");
        }
    }

    #[test]
    fn paths_and_their_rows() {
        // (path, symlink, the row's glob or None)
        let cases: &[(&str, bool, Option<&str>)] = &[
            (".gitattributes", false, Some("**/.gitattributes")),
            ("src/deep/.gitattributes", false, Some("**/.gitattributes")),
            (".GitAttributes", false, Some("**/.gitattributes")),
            (".gitmodules", false, Some(".gitmodules")),
            ("vendor/.gitmodules", false, None),
            (".lfsconfig", false, Some(".lfsconfig")),
            ("app/.envrc", false, Some("**/.envrc")),
            (".envrc.example", false, None),
            (".vscode/tasks.json", false, Some("**/.vscode/**")),
            ("web/.vscode/settings.json", false, Some("**/.vscode/**")),
            ("proj.code-workspace", false, Some("**/*.code-workspace")),
            (".idea/workspace.xml", false, Some("**/.idea/**")),
            (".devcontainer/devcontainer.json", false, Some("**/.devcontainer/**")),
            (".github/workflows/x.yml", false, Some(".github/workflows/**")),
            (".github/workflows/sub/x.yml", false, Some(".github/workflows/**")),
            (".github/actions/build/action.yml", false, Some(".github/actions/**")),
            (".github/ISSUE_TEMPLATE/bug.md", false, None),
            ("sub/.github/workflows/x.yml", false, None),
            (".gitlab-ci.yml", false, Some(".gitlab-ci.yml")),
            (".circleci/config.yml", false, Some(".circleci/**")),
            ("Jenkinsfile", false, Some("**/Jenkinsfile")),
            ("ci/Jenkinsfile", false, Some("**/Jenkinsfile")),
            ("azure-pipelines.yml", false, Some("azure-pipelines.yml")),
            (".travis.yml", false, Some(".travis.yml")),
            (".buildkite/pipeline.yml", false, Some(".buildkite/**")),
            (".pre-commit-config.yaml", false, Some(".pre-commit-config.yaml")),
            (".husky/pre-commit", false, Some("**/.husky/**")),
            (".githooks/pre-push", false, Some(".githooks/**")),
            ("lefthook.yml", false, Some("lefthook.yml")),
            ("retry-run.toml", false, Some("retry-run.toml")),
            ("sub/retry-run.toml", false, None),
            (".claude/settings.json", false, Some("**/.claude/settings.json")),
            (".claude/commands/x.md", false, None),
            ("src/main.rs", false, None),
            ("README.md", false, None),
            // A symlink standing for a directory of the table.
            (".github", true, Some(".github/workflows/**")),
            (".github/workflows", true, Some(".github/workflows/**")),
            ("web/.vscode", true, Some("**/.vscode/**")),
            (".github", false, None),
            ("src", true, None),
        ];
        for (path, link, want) in cases {
            let got = row_of(path.as_bytes(), *link).map(|r| r.glob);
            assert_eq!(got, *want, "{path} (link {link})");
        }
    }

    fn change(status: Status, old: Option<&str>, new: Option<&str>) -> Change {
        let side = |p: Option<&str>| p.map(|p| Side { path: p.as_bytes().to_vec(), kind: EntryKind::File });
        Change {
            status,
            old: side(old),
            new: side(new),
            symlink_target: None,
            submodule_dirty: false,
            binary: false,
            additions: 0,
            deletions: 0,
            symbols: None,
        }
    }

    fn added(p: &str) -> Change {
        change(Status::Added, None, Some(p))
    }

    fn rules(allow: &[&str]) -> Rules {
        Rules::compile(&allow.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &[]).expect("globs")
    }

    type Found = (Vec<(String, String)>, Vec<(String, String)>);

    fn run(mode: LandGate, allow: &[&str], changes: &[Change], gitmodules: &str) -> Found {
        let gate = Gate { mode, config_files: vec![b"ci/retry.toml".to_vec()] };
        let text = gitmodules.as_bytes().to_vec();
        let l = check(&gate, &rules(allow), changes, &|| Some(text.clone()));
        let pairs = |v: Vec<Violation>| {
            v.into_iter()
                .map(|v| (String::from_utf8_lossy(&v.path).into_owned(), v.rule.unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        (pairs(l.violations), pairs(l.flagged))
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn modes_and_allow_globs() {
        use LandGate::*;
        let wf = [added(".github/workflows/x.yml"), added("src/a.rs")];
        let wf_rule = [(".github/workflows/x.yml", ".github/workflows/**")];
        // (mode, allow, changes, violations, flagged)
        type Case<'a> = (LandGate, &'a [&'a str], &'a [Change], &'a [(&'a str, &'a str)], &'a [(&'a str, &'a str)]);
        let toml = [change(Status::Modified, Some("retry-run.toml"), Some("retry-run.toml"))];
        let toml_rule = [("retry-run.toml", "retry-run.toml")];
        let other_cfg = [change(Status::Modified, Some("ci/retry.toml"), Some("ci/retry.toml"))];
        let renamed_away = [change(Status::Renamed, Some(".envrc"), Some("envrc.txt"))];
        let deleted = [change(Status::Deleted, Some(".gitlab-ci.yml"), None)];
        let cases: Vec<Case> = vec![
            (Fail, &[], &wf, &wf_rule, &[]),
            (Flag, &[], &wf, &[], &wf_rule),
            (Off, &[], &wf, &[], &[]),
            // `**` allows every path and names none.
            (Fail, &["**"], &wf, &wf_rule, &[]),
            (Fail, &["**/*.yml", "src/**"], &wf, &wf_rule, &[]),
            (Fail, &[".github/**"], &wf, &wf_rule, &[]),
            // An allow glob spelling the entry lifts it, in any case.
            (Fail, &["**", ".github/workflows/**"], &wf, &[], &[]),
            (Fail, &[".github/workflows/x.yml"], &wf, &[], &[]),
            (Fail, &["**", ".GITHUB/workflows/**"], &wf, &wf_rule, &[]),
            (Fail, &["{src/**,.github/workflows/*.yml}"], &wf, &[], &[]),
            // retry-run's config: every mode, lifted by naming it.
            (Fail, &[], &toml, &toml_rule, &[]),
            (Flag, &[], &toml, &toml_rule, &[]),
            (Off, &[], &toml, &toml_rule, &[]),
            (Off, &["retry-run.toml"], &toml, &[], &[]),
            (Off, &[], &other_cfg, &[("ci/retry.toml", "ci/retry.toml")], &[]),
            // Both sides of a rename, and deletes, are writes.
            (Fail, &[], &renamed_away, &[("envrc.txt", "**/.envrc")], &[]),
            (Fail, &[], &deleted, &[(".gitlab-ci.yml", ".gitlab-ci.yml")], &[]),
        ];
        for (mode, allow, changes, want_v, want_f) in cases {
            let got = run(mode, allow, changes, "");
            assert_eq!(got, (pairs(want_v), pairs(want_f)), "{mode:?} allow {allow:?} {changes:?}");
        }
    }

    #[test]
    fn a_command_in_gitmodules_is_lifted_by_no_allow_glob() {
        use LandGate::*;
        let gm = [change(Status::Modified, Some(".gitmodules"), Some(".gitmodules"))];
        let cmd = "[submodule \"a\"]\n\tpath = a\n\turl = ../a\n\tupdate = !sh x\n";
        let plain = "[submodule \"a\"]\n\tpath = a\n\turl = ../a\n";
        let rule = "command in .gitmodules: update = !sh x";
        let all = [".gitmodules"];
        assert_eq!(run(Fail, &all, &gm, cmd), (pairs(&[(".gitmodules", rule)]), vec![]));
        assert_eq!(run(Flag, &all, &gm, cmd), (vec![], pairs(&[(".gitmodules", rule)])));
        assert_eq!(run(Off, &all, &gm, cmd), (vec![], vec![]));
        assert_eq!(run(Fail, &all, &gm, plain), (vec![], vec![]));
        assert_eq!(run(Fail, &[], &gm, plain), (pairs(&[(".gitmodules", ".gitmodules")]), vec![]));
        // A deleted .gitmodules is not read.
        let gone = [change(Status::Deleted, Some(".gitmodules"), None)];
        assert_eq!(run(Fail, &all, &gone, cmd), (vec![], vec![]));
    }

    #[test]
    fn gitmodules_commands_as_data() {
        // (text, the commands found)
        let cases: &[(&str, &[&str])] = &[
            ("[submodule \"a\"]\n\tpath = a\n\turl = https://example.com/a.git\n", &[]),
            ("[submodule \"a\"]\n\turl = ../a\n\tbranch = main\n\tupdate = rebase\n", &[]),
            ("[submodule \"a\"]\n\tupdate = !sh -c 'touch /tmp/x'\n", &["update = !sh -c 'touch /tmp/x'"]),
            ("[submodule \"a\"]\n\tUpdate=\"!sh\"\n", &["update = !sh"]),
            ("[submodule \"a\"]\n\turl = ext::sh -c touch% /tmp/pwned\n", &["url = ext::sh -c touch% /tmp/pwned"]),
            ("[submodule \"a\"]\n\turl = EXT::sh\n", &["url = EXT::sh"]),
            ("[submodule \"a\"]\n\turl = fd::3\n", &["url = fd::3"]),
            ("[submodule \"a\"]\n\turl = \"-u./payload\"\n", &["url = -u./payload"]),
            ("[submodule \"a\"]\n\turl =   --upload-pack=touch\n", &["url = --upload-pack=touch"]),
            ("[submodule \"a\"]\n\turl = !sh\n", &["url = !sh"]),
            // A key on the header's line, a continuation, a comment.
            ("[submodule \"a]\"] update = !sh\n", &["update = !sh"]),
            ("[submodule \"a\"]\n\tupdate = \\\n!sh\n", &["update = !sh"]),
            ("[submodule \"a\"]\n\t# update = !sh\n\t; url = ext::x\n", &[]),
            ("[submodule \"a\"]\n\turl = ../a # ext::sh\n", &[]),
            ("[submodule \"a\"]\r\n\tupdate = !sh\r\n", &["update = !sh"]),
            // Old-style subsection and a dotted key.
            ("[submodule.a]\n\tupdate = !sh\n", &["update = !sh"]),
            ("submodule.a.update = !sh\n", &["update = !sh"]),
            // No value, garbage, an unclosed header: nothing, no panic.
            ("[submodule \"a\"]\n\tupdate\n", &[]),
            ("\u{0}\u{ff}=\n[\n", &[]),
            // An unclosed header (git refuses the file): the keys after it still count.
            ("[submodule \"a\n\tupdate = !sh\n", &["update = !sh"]),
            // Control characters shown as `?`.
            ("[s]\nupdate = !sh\\b\n", &["update = !sh?"]),
            ("[s]\nurl = https://x/y::z\n", &[]),
        ];
        for (text, want) in cases {
            let got = gitmodules_commands(text.as_bytes());
            assert_eq!(got, want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{text:?}");
        }
        let big = vec![b'#'; MAX_GITMODULES + 1];
        assert_eq!(gitmodules_commands(&big).len(), 1);
    }

    #[test]
    fn merge_keeps_precedence_and_one_finding_per_path() {
        let v = |path: &str, reason: ScopeReason| Violation {
            path: path.as_bytes().to_vec(),
            old_path: None,
            status: Status::Added,
            reason,
            rule: None,
            subject: Subject::Path,
        };
        let mut report = super::super::Report {
            checked: 3,
            violations: vec![v("a", ScopeReason::Denied), v("b", ScopeReason::OutsideAllow)],
            flagged: Vec::new(),
        };
        let landing = Landing {
            violations: vec![v("a", ScopeReason::ActsAfterLand), v("b", ScopeReason::ActsAfterLand)],
            flagged: vec![v("a", ScopeReason::ActsAfterLand), v("c", ScopeReason::ActsAfterLand)],
        };
        merge(&mut report, landing);
        let got: Vec<_> = report.violations.iter().map(|v| (v.path.clone(), v.reason)).collect();
        assert_eq!(got, vec![(b"a".to_vec(), ScopeReason::Denied), (b"b".to_vec(), ScopeReason::ActsAfterLand)]);
        assert_eq!(report.flagged.iter().map(|f| f.path.clone()).collect::<Vec<_>>(), vec![b"c".to_vec()]);
    }
}
