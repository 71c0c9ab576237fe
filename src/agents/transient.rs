//! Failures of the model provider that are not the attempt's doing: a rate
//! limit, an overload, a server error, a connection to the model dropped.
//! An agent run that ends early on one is run again from the attempt's
//! clean start, after a wait, without spending an attempt (docs/agents/README.md,
//! "Transient failures"). Pure: the agent's output and what the sandbox's
//! proxy saw are handed in.

use std::collections::BTreeMap;
use std::time::Duration;

/// The kinds of transient failure, as presets and the record name them.
pub const KINDS: &[&str] = &["rate_limit", "overloaded", "server_error", "dropped"];

/// What each kind is recognised by in an agent's output: for each kind,
/// strings (matched without regard to case) that its CLI prints for it
/// and prints for nothing else. A preset's own list replaces
/// [`common_forms`].
pub type Forms = BTreeMap<String, Vec<String>>;

/// The forms a custom agent (no preset) is read with: the words of the
/// HTTP statuses and of the error types the common model APIs answer with
/// (Anthropic, OpenAI, Google), and the words of Node's and Python's HTTP
/// clients for a connection the server closed.
pub fn common_forms() -> Forms {
    let form = |k: &str, v: &[&str]| (k.to_string(), v.iter().map(|s| s.to_string()).collect());
    [
        form(
            "rate_limit",
            &[
                "429 Too Many Requests",
                "rate_limit_error",
                "RateLimitError",
                "rate limit exceeded",
                "RESOURCE_EXHAUSTED",
            ],
        ),
        form("overloaded", &["overloaded_error", "API Error: 529", "529 Overloaded", "status code 529"]),
        form(
            "server_error",
            &["503 Service Unavailable", "502 Bad Gateway", "InternalServerError", "ServiceUnavailable"],
        ),
        form(
            "dropped",
            &[
                "ECONNRESET",
                "socket hang up",
                "Connection reset by peer",
                "RemoteDisconnected",
                "Server disconnected without sending a response",
                "UND_ERR_SOCKET",
            ],
        ),
    ]
    .into_iter()
    .collect()
}

/// How the agent's run ended, as far as telling a transient failure needs.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentEnded {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Its CLI exits 0 when it gives up on its provider (Aider): a run that
    /// exited 0 is read too, by its last lines alone.
    pub gives_up_with_0: bool,
}

/// The output's last lines read for a failure: where a CLI says why it
/// stopped (a JSON result, an error and its explanation).
const LAST_LINES: usize = 12;

/// Of a run that exited 0 ([`AgentEnded::gives_up_with_0`]): the error must
/// be what it printed last.
const LAST_LINES_AFTER_0: usize = 4;

/// One answer of a model host as the sandbox's proxy saw it: a request
/// over plain HTTP it forwarded, the status of the first answer on that
/// connection (`None`: the host closed it without one) and its
/// `Retry-After` header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answered {
    pub status: Option<u16>,
    pub retry_after: Option<String>,
}

/// A transient failure found: its kind, the line of the agent's output or
/// the proxy's observation that says so, and how long the provider asked
/// to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transient {
    pub kind: &'static str,
    pub said: String,
    pub retry_after: Option<Duration>,
}

/// The statuses of a model API that say "not now" rather than "not this":
/// rate limited, a server error, overloaded.
fn kind_of_status(status: u16) -> Option<&'static str> {
    match status {
        429 => Some("rate_limit"),
        529 => Some("overloaded"),
        500 | 502 | 503 | 504 => Some("server_error"),
        _ => None,
    }
}

/// Whether the agent's run that `ended` so, printing `output` (its last
/// part is enough), with `answered` the plain-HTTP answers of its model
/// hosts the proxy saw (in order), ended on a transient failure of its
/// provider. Only a run that failed (a non-zero exit, not a timeout) is
/// read: an agent that finished its work, or ran out of time, did not end
/// early on the provider.
///
/// The proxy's last answer is the surest evidence: a transient status, or
/// a connection closed without an answer. Else the last line of the
/// output that holds one of `forms` names the kind.
pub fn classify(ended: AgentEnded, output: &str, answered: &[Answered], forms: &Forms) -> Option<Transient> {
    let succeeded = ended.exit_code == Some(0);
    if ended.timed_out || (succeeded && !ended.gives_up_with_0) {
        return None;
    }
    if let Some(last) = answered.last().filter(|_| !succeeded) {
        let kind = match last.status {
            Some(s) => kind_of_status(s),
            None => Some("dropped"),
        };
        if let Some(kind) = kind {
            let said = match last.status {
                Some(s) => format!("the model server answered HTTP {s}"),
                None => "the model server closed the connection without an answer".to_string(),
            };
            let retry_after = last.retry_after.as_deref().and_then(retry_after_secs);
            return Some(Transient { kind, said, retry_after });
        }
    }
    let lower: Vec<(String, Vec<String>)> =
        forms.iter().map(|(k, v)| (k.clone(), v.iter().map(|s| s.to_lowercase()).collect())).collect();
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let last = if succeeded { LAST_LINES_AFTER_0 } else { LAST_LINES };
    for (i, line) in lines.iter().enumerate().rev().take(last) {
        let l = line.to_lowercase();
        for (kind, markers) in &lower {
            if markers.iter().any(|m| l.contains(m.as_str())) {
                let kind = KINDS.iter().find(|k| **k == kind).copied().unwrap_or("server_error");
                let before = if i > 0 { lines[i - 1] } else { "" };
                return Some(Transient { kind, said: said_in(line, before), retry_after: None });
            }
        }
    }
    None
}

/// What the line a form was found in says: its JSON `message` or
/// `result` when it has one (a CLI's JSON result is one long line), else
/// the line, with the line `before` it when it is a bare field
/// (`"code": 429`); at most about 200 characters.
fn said_in(line: &str, before: &str) -> String {
    const SHORT: usize = 200;
    let text = match json_text(line) {
        Some(m) => m,
        None if line.starts_with('"') && line.chars().count() < 30 && !before.is_empty() => format!("{before} {line}"),
        None => line.to_string(),
    };
    clip(&text, SHORT)
}

/// `text` cut to `max` characters, `...` marking a cut.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

/// The value of the first `"message"` or `"result"` string of a line of
/// JSON, when the line is longer than a glance.
fn json_text(line: &str) -> Option<String> {
    if line.chars().count() <= 200 {
        return None;
    }
    ["\"message\":\"", "\"result\":\"", "\"message\": \""].iter().find_map(|key| {
        let from = line.find(key)? + key.len();
        let mut out = String::new();
        let mut escaped = false;
        for c in line[from..].chars() {
            match (escaped, c) {
                (false, '\\') => escaped = true,
                (false, '"') => return Some(out),
                (_, c) => {
                    out.push(c);
                    escaped = false;
                }
            }
        }
        Some(out)
    })
}

/// A `Retry-After` header's delay: whole seconds (the form model APIs
/// use). An HTTP date is not read (`None`: the backoff applies).
pub fn retry_after_secs(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// The wait before the `n`th run again (1 for the first): `base` doubled
/// for each run again before it, or what the provider asked when it said
/// (never less than 0, never more than `cap`).
pub fn wait_before(n: u32, base: Duration, asked: Option<Duration>, cap: Duration) -> Duration {
    let doubled = base.saturating_mul(1u32 << (n.saturating_sub(1)).min(16));
    asked.unwrap_or(doubled).min(cap)
}

/// The longest wait between two runs: a provider that asks for more is
/// not waited on (the run stops, as at the limit).
pub const LONGEST_WAIT: Duration = Duration::from_secs(15 * 60);

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> AgentEnded {
        AgentEnded { exit_code: Some(1), ..AgentEnded::default() }
    }

    #[test]
    fn a_run_that_finished_or_timed_out_is_not_transient() {
        let out = "API Error: 529 {\"type\":\"overloaded_error\"}";
        let forms = common_forms();
        assert!(classify(AgentEnded { exit_code: Some(0), ..AgentEnded::default() }, out, &[], &forms).is_none());
        assert!(
            classify(AgentEnded { exit_code: None, timed_out: true, ..AgentEnded::default() }, out, &[], &forms)
                .is_none()
        );
        assert_eq!(classify(failed(), out, &[], &forms).map(|t| t.kind), Some("overloaded"));
        let killed = AgentEnded { exit_code: None, ..AgentEnded::default() };
        assert_eq!(classify(killed, out, &[], &forms).map(|t| t.kind), Some("overloaded"));
        // A CLI that gives up with 0: read by its last lines alone, and
        // never by what the proxy saw earlier.
        let zero = AgentEnded { exit_code: Some(0), gives_up_with_0: true, ..AgentEnded::default() };
        assert_eq!(classify(zero, out, &[], &forms).map(|t| t.kind), Some("overloaded"));
        let then_worked =
            format!("{out}\nRetrying in 0.2 seconds...\nApplied edit to calc.py\nTokens: 1k sent\nCost: $0.01\nbye");
        assert!(classify(zero, &then_worked, &[], &forms).is_none());
        let dropped = [Answered { status: None, retry_after: None }];
        assert!(classify(zero, "done", &dropped, &forms).is_none());
    }

    #[test]
    fn the_output_s_last_line_that_says_one_names_the_kind() {
        let forms = common_forms();
        let out = "working...\nError: 429 Too Many Requests\nretrying\nError: socket hang up\n\n";
        let long = format!("{}\n{out}", "x\n".repeat(50));
        assert!(
            classify(failed(), &format!("{out}{}", "line\n".repeat(20)), &[], &forms).is_none(),
            "only the last lines"
        );
        assert!(classify(failed(), &long, &[], &forms).is_some());
        let t = classify(failed(), out, &[], &forms).expect("transient");
        assert_eq!((t.kind, t.said.as_str()), ("dropped", "Error: socket hang up"));
        assert!(classify(failed(), "AssertionError: 1 != 2\nexit 1", &[], &forms).is_none());
        // Case does not matter; a preset's own forms replace the common ones.
        assert_eq!(classify(failed(), "RATE_LIMIT_ERROR", &[], &forms).map(|t| t.kind), Some("rate_limit"));
        let own: Forms = [("overloaded".to_string(), vec!["model is busy".to_string()])].into_iter().collect();
        assert!(classify(failed(), "RATE_LIMIT_ERROR", &[], &own).is_none());
        assert_eq!(classify(failed(), "The model is busy.", &[], &own).map(|t| t.kind), Some("overloaded"));
    }

    #[test]
    fn the_proxy_s_last_answer_comes_first_with_its_retry_after() {
        let forms = common_forms();
        let seen = [
            Answered { status: Some(200), retry_after: None },
            Answered { status: Some(429), retry_after: Some("7".into()) },
        ];
        let t = classify(failed(), "nothing said", &seen, &forms).expect("transient");
        assert_eq!((t.kind, t.retry_after), ("rate_limit", Some(Duration::from_secs(7))));
        assert!(t.said.contains("HTTP 429"), "{}", t.said);
        let dropped = [Answered { status: None, retry_after: None }];
        assert_eq!(classify(failed(), "", &dropped, &forms).map(|t| t.kind), Some("dropped"));
        // A last answer that was not transient leaves it to the output.
        let ok = [Answered { status: Some(400), retry_after: None }];
        assert!(classify(failed(), "bad request", &ok, &forms).is_none());
        assert_eq!(classify(failed(), "overloaded_error", &ok, &forms).map(|t| t.kind), Some("overloaded"));
        for (s, k) in [(503, "server_error"), (529, "overloaded"), (502, "server_error")] {
            let a = [Answered { status: Some(s), retry_after: Some("Wed, 21 Oct 2015 07:28:00 GMT".into()) }];
            let t = classify(failed(), "", &a, &forms).expect("transient");
            assert_eq!((t.kind, t.retry_after), (k, None));
        }
    }

    #[test]
    fn the_wait_doubles_unless_the_provider_asked_and_stays_under_the_cap() {
        let s = Duration::from_secs;
        assert_eq!(wait_before(1, s(10), None, LONGEST_WAIT), s(10));
        assert_eq!(wait_before(3, s(10), None, LONGEST_WAIT), s(40));
        assert_eq!(wait_before(2, s(10), Some(s(3)), LONGEST_WAIT), s(3));
        assert_eq!(wait_before(40, s(10), None, LONGEST_WAIT), LONGEST_WAIT);
        assert_eq!(wait_before(1, s(0), None, LONGEST_WAIT), s(0));
        assert_eq!(retry_after_secs(" 12 "), Some(s(12)));
        assert_eq!(retry_after_secs("soon"), None);
    }

    #[test]
    fn every_kind_has_common_forms() {
        let forms = common_forms();
        for k in KINDS {
            assert!(forms.get(*k).is_some_and(|v| !v.is_empty()), "{k}");
        }
        assert_eq!(forms.len(), KINDS.len());
    }
}
