//! Reading an agent's report of what it did and what it cost, from its
//! output. Pure. Readers are named by the presets' `output`:
//!
//! - `claude-json`: Claude Code's `--output-format json` result object
//!   (`result`, `num_turns`, `total_cost_usd`, `usage`), the last JSON
//!   object line of the output;
//! - `codex-jsonl`: Codex's `exec --json` events: the last `agent_message`
//!   item's text, and the `usage` of each `turn.completed` (summed);
//! - `gemini-json`: Gemini CLI's `--output-format json` object (after any
//!   log lines): `response`, and `stats.models.*` tokens and requests;
//! - `opencode-jsonl`: opencode's `run --format json` events: the last
//!   `text` part, and each `step_finish` part's tokens and cost (summed);
//! - `aider-text`: Aider's `Tokens: 1.2k sent, 40 received.` lines (summed)
//!   and its last `Cost: ... $X session.`; the final message is the output's
//!   last lines;
//! - `text`: no usage; the final message is the output's last lines.

use crate::model::Usage;

/// What an agent's output says.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AgentReport {
    pub usage: Option<Usage>,
    /// Its own last words: the final message.
    pub final_message: Option<String>,
}

/// Lines of text output taken as the final message.
const TEXT_LINES: usize = 20;

/// Reads `output` with the reader called `kind`.
pub(crate) fn read(kind: &str, output: &str) -> AgentReport {
    match kind {
        "claude-json" => claude_json(output).unwrap_or_else(|| text(output)),
        "aider-text" => AgentReport { usage: aider(output), ..text(output) },
        "codex-jsonl" => codex_jsonl(output).unwrap_or_else(|| text(output)),
        "gemini-json" => gemini_json(output).unwrap_or_else(|| text(output)),
        "opencode-jsonl" => opencode_jsonl(output).unwrap_or_else(|| text(output)),
        _ => text(output),
    }
}

fn text(output: &str) -> AgentReport {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(TEXT_LINES);
    let msg = lines[start..].join("\n");
    AgentReport { usage: None, final_message: (!msg.is_empty()).then_some(msg) }
}

/// Every line of `output` that is a JSON value (logs between them skipped).
fn json_lines(output: &str) -> Vec<serde_json::Value> {
    output.lines().filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok()).collect()
}

/// The last JSON object of `output` that starts at the beginning of a line
/// and runs to the end (pretty-printed output after log lines), or to the
/// lines the sandbox adds after the agent's output (`retry-run: ended 1
/// process(es) ...`, which may follow its last `}` on the same line).
fn trailing_object(output: &str) -> Option<serde_json::Value> {
    let mut starts: Vec<usize> = output.match_indices("\n{").map(|(i, _)| i + 1).collect();
    if output.starts_with('{') {
        starts.insert(0, 0);
    }
    starts.iter().find_map(|&i| {
        let mut values = serde_json::Deserializer::from_str(&output[i..]).into_iter::<serde_json::Value>();
        let v = values.next()?.ok()?;
        let rest = &output[i + values.byte_offset()..];
        rest.lines().all(|l| l.trim().is_empty() || l.starts_with("retry-run: ")).then_some(v)
    })
}

fn gemini_json(output: &str) -> Option<AgentReport> {
    let v = trailing_object(output)?;
    let message = v.get("response").and_then(|r| r.as_str()).map(str::to_string);
    let models = v.get("stats").and_then(|s| s.get("models")).and_then(|m| m.as_object());
    let usage = models.map(|m| {
        let sum = |path: &[&str]| -> u64 {
            m.values().filter_map(|model| path.iter().try_fold(model, |x, k| x.get(*k))?.as_u64()).sum()
        };
        Usage {
            input_tokens: Some(sum(&["tokens", "prompt"])),
            output_tokens: Some(sum(&["tokens", "candidates"])),
            cost_usd: None,
            turns: Some(sum(&["api", "totalRequests"])),
        }
    });
    Some(AgentReport { usage, final_message: message })
}

fn opencode_jsonl(output: &str) -> Option<AgentReport> {
    let events = json_lines(output);
    let kind = |e: &serde_json::Value, k: &str| e.get("type").and_then(|t| t.as_str()) == Some(k);
    let steps: Vec<&serde_json::Value> =
        events.iter().filter(|e| kind(e, "step_finish")).filter_map(|e| e.get("part")).collect();
    let message = events
        .iter()
        .rev()
        .find(|e| kind(e, "text"))
        .and_then(|e| e.get("part")?.get("text")?.as_str())
        .map(str::to_string);
    if steps.is_empty() && message.is_none() {
        return None;
    }
    let tokens = |k: &str| -> u64 { steps.iter().filter_map(|p| p.get("tokens")?.get(k)?.as_u64()).sum() };
    let costs: Vec<f64> = steps.iter().filter_map(|p| p.get("cost")?.as_f64()).collect();
    let usage = (!steps.is_empty()).then(|| Usage {
        input_tokens: Some(tokens("input")),
        output_tokens: Some(tokens("output")),
        cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
        turns: Some(steps.len() as u64),
    });
    Some(AgentReport { usage, final_message: message })
}

fn codex_jsonl(output: &str) -> Option<AgentReport> {
    let events = json_lines(output);
    let turns: Vec<&serde_json::Value> =
        events.iter().filter(|e| e.get("type").and_then(|t| t.as_str()) == Some("turn.completed")).collect();
    let message = events
        .iter()
        .rev()
        .filter_map(|e| e.get("item"))
        .find(|i| i.get("type").and_then(|t| t.as_str()) == Some("agent_message"))
        .and_then(|i| i.get("text")?.as_str())
        .map(str::to_string);
    if turns.is_empty() && message.is_none() {
        return None;
    }
    let sum = |k: &str| -> Option<u64> {
        let v: Vec<u64> = turns.iter().filter_map(|t| t.get("usage")?.get(k)?.as_u64()).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let usage = (!turns.is_empty()).then(|| Usage {
        input_tokens: sum("input_tokens"),
        output_tokens: sum("output_tokens"),
        cost_usd: None,
        turns: Some(turns.len() as u64),
    });
    Some(AgentReport { usage, final_message: message })
}

/// `900`, `1.2k`, `12k`, `1.5M` as Aider prints token counts.
fn aider_count(s: &str) -> Option<u64> {
    let s = s.trim().replace(',', "");
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        _ => (&s[..], 1.0),
    };
    num.parse::<f64>().ok().map(|n| (n * mult).round() as u64)
}

fn aider(output: &str) -> Option<Usage> {
    let (mut sent, mut received, mut turns, mut cost) = (0u64, 0u64, 0u64, None);
    for line in output.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("Tokens: ") {
            // `900 sent, 40 received.` or `1.2k sent, 3 cache write, 40 received. Cost: ...`
            let rest = rest.split(". Cost:").next().unwrap_or(rest);
            for part in rest.trim_end_matches('.').split(", ") {
                if let Some(n) = part.strip_suffix(" sent").and_then(aider_count) {
                    sent += n;
                } else if let Some(n) = part.strip_suffix(" received").and_then(aider_count) {
                    received += n;
                }
            }
            turns += 1;
        }
        if let Some(i) = line.find("Cost: $") {
            // `Cost: $0.0012 message, $0.0034 session.`
            let session = line[i..].split(", $").nth(1).and_then(|s| s.split(' ').next());
            if let Some(c) = session.and_then(|c| c.parse::<f64>().ok()) {
                cost = Some(c);
            }
        }
    }
    (turns > 0).then_some(Usage {
        input_tokens: Some(sent),
        output_tokens: Some(received),
        cost_usd: cost,
        turns: Some(turns),
    })
}

fn claude_json(output: &str) -> Option<AgentReport> {
    let v: serde_json::Value = output
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
        .find(|v| v.get("type").and_then(|t| t.as_str()) == Some("result"))?;
    let u = v.get("usage");
    let tokens = |k: &str| u.and_then(|u| u.get(k)).and_then(serde_json::Value::as_u64);
    let input = match (tokens("input_tokens"), tokens("cache_read_input_tokens"), tokens("cache_creation_input_tokens"))
    {
        (None, None, None) => None,
        (a, b, c) => Some(a.unwrap_or(0) + b.unwrap_or(0) + c.unwrap_or(0)),
    };
    let usage = Usage {
        input_tokens: input,
        output_tokens: tokens("output_tokens"),
        cost_usd: v.get("total_cost_usd").and_then(serde_json::Value::as_f64),
        turns: v.get("num_turns").and_then(serde_json::Value::as_u64),
    };
    let final_message = v.get("result").and_then(|r| r.as_str()).map(str::to_string).filter(|s| !s.is_empty());
    Some(AgentReport { usage: Some(usage), final_message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_result_captured_from_the_real_cli() {
        let out = include_str!("../../tests/agents/captured/claude-code-2.1.197.json");
        let r = read("claude-json", out);
        let u = r.usage.expect("usage");
        assert_eq!(u.turns, Some(2));
        assert_eq!((u.input_tokens, u.output_tokens), (Some(2400), Some(160)));
        assert_eq!(u.cost_usd, Some(0.016));
        assert_eq!(r.final_message.as_deref(), Some("I changed calc.py; the tests should pass now."));
        // Not JSON (a crash before the result): the tail, no usage.
        let r = read("claude-json", "Error: boom\n  at x\n");
        assert_eq!((r.usage, r.final_message.as_deref()), (None, Some("Error: boom\n  at x")));
        assert_eq!(read("text", "").final_message, None);
    }

    /// (reader, output captured from the real CLI, input, output, turns, cost, final message)
    type Case = (&'static str, &'static str, u64, u64, u64, Option<f64>, &'static str);

    #[test]
    fn events_and_results_captured_from_the_real_clis() {
        let cases: [Case; 3] = [
            (
                "gemini-json",
                include_str!("../../tests/agents/captured/gemini-0.61.0.json"),
                2100,
                90,
                3,
                None,
                "I edited calc.py.",
            ),
            (
                "opencode-jsonl",
                include_str!("../../tests/agents/captured/opencode-1.18.33.jsonl"),
                1600,
                100,
                2,
                Some(0.0),
                "I edited calc.py.",
            ),
            (
                "codex-jsonl",
                include_str!("../../tests/agents/captured/codex-0.169.0.jsonl"),
                3000,
                120,
                1,
                None,
                "I edited calc.py.",
            ),
        ];
        for (reader, out, input, output, turns, cost, message) in cases {
            let r = read(reader, out);
            let u = r.usage.unwrap_or_else(|| panic!("{reader}: usage"));
            assert_eq!(
                (u.input_tokens, u.output_tokens, u.turns, u.cost_usd),
                (Some(input), Some(output), Some(turns), cost),
                "{reader}"
            );
            assert_eq!(r.final_message.as_deref(), Some(message), "{reader}");
        }
    }

    #[test]
    fn a_line_the_sandbox_adds_after_the_json_is_not_part_of_it() {
        let captured = include_str!("../../tests/agents/captured/gemini-0.61.0.json");
        // Gemini ends its JSON without a newline; the sandbox's line follows.
        let out = format!("{}retry-run: ended 1 process(es) the command left running\n", captured.trim_end());
        let r = read("gemini-json", &out);
        assert_eq!(r.usage.and_then(|u| u.input_tokens), Some(2100));
        assert_eq!(r.final_message.as_deref(), Some("I edited calc.py."));
        let other = format!("{}\nsomething else\n", captured.trim_end());
        assert_eq!(read("gemini-json", &other).usage, None, "other text after it: not the result");
    }

    #[test]
    fn aider_tokens_captured_from_the_real_cli() {
        let out = include_str!("../../tests/agents/captured/aider-0.86.2.txt");
        let r = read("aider-text", out);
        let u = r.usage.expect("usage");
        assert_eq!((u.input_tokens, u.output_tokens, u.turns, u.cost_usd), (Some(900), Some(40), Some(1), None));
        assert!(r.final_message.expect("tail").ends_with("Applied edit to calc.py"));
        assert_eq!(aider_count("1.2k"), Some(1200));
        assert_eq!(aider_count("12k"), Some(12000));
    }
}
