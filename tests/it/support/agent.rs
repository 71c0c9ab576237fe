//! The fake agent: a stand-in for an AI agent, driven by a script of
//! commands, after jj's `cli/testing/fake-editor.rs`.
//!
//! The script holds one block of commands per call, separated by lines
//! `---` (the "next call" marker): the agent's first attempt runs the first
//! block, its second attempt the second, and so on; an attempt past the
//! last block runs the last one again. The call is `$RETRY_RUN_ATTEMPT`,
//! which retry-run sets for every agent, so each task of a fleet starts at
//! the first block. The commands run in the agent's working directory (its
//! worktree), one a line:
//!
//! | command | what it does |
//! |---|---|
//! | `write PATH TEXT` | PATH gets TEXT (its directories are created) |
//! | `append PATH TEXT` | TEXT is appended to PATH |
//! | `rm PATH` | PATH is removed, whatever it is |
//! | `expect PATH TEXT` | stops the agent (exit 1) unless PATH holds exactly TEXT |
//! | `expect-prompt TEXT` | stops the agent (exit 1) unless the prompt (`$RETRY_RUN_PROMPT_FILE`) contains TEXT |
//! | `sh COMMAND` | runs COMMAND in the agent's own shell (`$$` is the agent, `exit` ends it) |
//! | `sleep SECONDS` | sleeps |
//! | `exit N` | ends the agent with exit code N |
//!
//! In TEXT, `\n` is a newline and `\\` a backslash; COMMAND is taken as
//! written. PATH has no spaces. A command that fails ends the agent with
//! its exit code; the agent prints nothing of its own but on failure, to
//! stderr. Tests write scripts with the [`FakeAgent`] builder, which
//! escapes the text.
//!
//! The agent is `sh <interpreter> <script>`, both files in the test's
//! temporary directory (readable under the sandbox, outside every worktree).

use std::path::PathBuf;

use super::TestEnv;

/// The interpreter of fake-agent scripts (POSIX sh). The script is read on
/// descriptor 3, so that the commands keep the agent's own stdin; `sh`
/// commands run without it.
const INTERPRETER: &str = r#"# The fake agent of the tests: tests/it/support/agent.rs says what it does.
script=$1
call=${RETRY_RUN_ATTEMPT:-1}
calls=$(( $(grep -c '^---$' "$script") + 1 ))
[ "$call" -le "$calls" ] || call=$calls
block=1
while IFS= read -r line <&3 || [ -n "$line" ]; do
  if [ "$line" = "---" ]; then block=$((block + 1)); continue; fi
  [ "$block" = "$call" ] || continue
  cmd=${line%% *}
  rest=${line#"$cmd"}
  rest=${rest# }
  path=${rest%% *}
  text=${rest#"$path"}
  text=${text# }
  case $cmd in
    write) mkdir -p "$(dirname "$path")" && printf '%b' "$text" > "$path" || exit ;;
    append) mkdir -p "$(dirname "$path")" && printf '%b' "$text" >> "$path" || exit ;;
    rm) rm -rf -- "$rest" || exit ;;
    expect)
      if ! printf '%b' "$text" | cmp -s - "$path"; then
        echo "fake agent: $path does not hold what the script expects" >&2
        exit 1
      fi ;;
    expect-prompt)
      want=$(printf '%b' "$rest")
      case $(cat "$RETRY_RUN_PROMPT_FILE") in
        *"$want"*) ;;
        *) echo "fake agent: the prompt lacks: $want" >&2; exit 1 ;;
      esac ;;
    sh) eval "$rest" 3<&- || exit ;;
    sleep) sleep "$rest" || exit ;;
    exit) exit "$rest" ;;
    "") ;;
    *) echo "fake agent: unknown command: $line" >&2; exit 2 ;;
  esac
done 3< "$script"
"#;

/// A fake agent's script, built call by call.
#[derive(Debug, Clone, Default)]
pub(crate) struct FakeAgent {
    lines: Vec<String>,
}

impl FakeAgent {
    pub(crate) fn new() -> FakeAgent {
        FakeAgent::default()
    }

    fn line(mut self, line: String) -> Self {
        assert!(!line.contains('\n'), "a fake-agent command is one line: {line:?}");
        self.lines.push(line);
        self
    }

    /// `path` gets `text`.
    pub(crate) fn write(self, path: &str, text: &str) -> Self {
        self.line(format!("write {} {}", one_path(path), escape(text)))
    }

    /// `text` is appended to `path`.
    pub(crate) fn append(self, path: &str, text: &str) -> Self {
        self.line(format!("append {} {}", one_path(path), escape(text)))
    }

    /// `path` is removed.
    pub(crate) fn rm(self, path: &str) -> Self {
        self.line(format!("rm {}", one_path(path)))
    }

    /// The agent stops (exit 1) unless `path` holds exactly `text`.
    pub(crate) fn expect(self, path: &str, text: &str) -> Self {
        self.line(format!("expect {} {}", one_path(path), escape(text)))
    }

    /// The agent stops (exit 1) unless its prompt contains `text`.
    pub(crate) fn expect_prompt(self, text: &str) -> Self {
        self.line(format!("expect-prompt {}", escape(text)))
    }

    /// `command` runs in the agent's shell.
    pub(crate) fn sh(self, command: &str) -> Self {
        self.line(format!("sh {command}"))
    }

    pub(crate) fn sleep(self, seconds: &str) -> Self {
        self.line(format!("sleep {seconds}"))
    }

    pub(crate) fn exit(self, code: i32) -> Self {
        self.line(format!("exit {code}"))
    }

    /// What follows is the agent's next call.
    pub(crate) fn next_call(self) -> Self {
        self.line("---".to_string())
    }

    /// Writes the interpreter (once per environment) and this script (the
    /// `n`th of the environment).
    pub(super) fn install(&self, env: &TestEnv, n: u32) -> Agent {
        let interpreter = env.path("fake-agent.sh");
        if !interpreter.exists() {
            std::fs::write(&interpreter, INTERPRETER).expect("write the fake agent");
        }
        let mut text = self.lines.join("\n");
        text.push('\n');
        let script = env.write(&format!("fake-agent-{n}.script"), text);
        Agent { interpreter, script }
    }
}

fn one_path(path: &str) -> &str {
    assert!(!path.is_empty() && !path.contains([' ', '\n']), "a fake-agent path has no spaces: {path:?}");
    path
}

/// Text as the interpreter's `printf '%b'` reads it back.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A fake agent written to disk: its command line.
#[derive(Debug, Clone)]
pub(crate) struct Agent {
    interpreter: PathBuf,
    script: PathBuf,
}

impl Agent {
    /// The command line: `sh <interpreter> <script>`.
    pub(crate) fn argv(&self) -> Vec<String> {
        vec!["sh".into(), self.interpreter.display().to_string(), self.script.display().to_string()]
    }

    /// The command line as one line of shell.
    pub(crate) fn shell(&self) -> String {
        self.argv().join(" ")
    }

    /// The command line as a TOML array, for `[agent] command`.
    pub(crate) fn toml(&self) -> String {
        format!("{:?}", self.argv())
    }

    /// `args`, then `--` and the agent's command line: the arguments of
    /// `retry-run run`.
    pub(crate) fn after(&self, args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).chain(std::iter::once("--".to_string())).chain(self.argv()).collect()
    }
}
