//! A task's target that no check reports on the base: a typo, or a test
//! the agent is to write (`--allow-new-target`). Before the first attempt
//! the run stops on one, naming the ids that do exist nearest to it. Pure.

/// The `k` ids nearest to `target`: fewest edits first, then the longest
/// shared prefix, then by name.
pub(crate) fn nearest<'a>(target: &str, ids: &'a [String], k: usize) -> Vec<&'a str> {
    let mut scored: Vec<(usize, usize, &str)> = ids
        .iter()
        .map(|id| {
            let shared = target.chars().zip(id.chars()).take_while(|(a, b)| a == b).count();
            (distance(target, id), usize::MAX - shared, id.as_str())
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.2 == b.2);
    scored.into_iter().take(k).map(|(_, _, id)| id).collect()
}

/// Levenshtein distance over characters; each side cut at 256 characters
/// (a test id is shorter; a longer one is far from any typo anyway).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(256).collect();
    let b: Vec<char> = b.chars().take(256).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// What stops the run: the targets no check reported on the base, each
/// with its nearest ids, and what to do.
pub(crate) fn message(missing: &[(String, Vec<&str>)], checks: &[String]) -> String {
    let mut out = String::new();
    for (target, near) in missing {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(&format!("target `{target}` is not reported by any check on the base"));
        match near.as_slice() {
            [] => out.push_str(&format!(" (the checks {} named no test)", checks.join(", "))),
            ids => {
                let quoted: Vec<String> = ids.iter().map(|i| format!("`{i}`")).collect();
                out.push_str(&format!("; nearest ids that exist: {}", quoted.join(", ")));
            }
        }
    }
    out.push_str(
        "; fix the target's id (as the runner prints it), or give --allow-new-target when the agent is to write that test",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_ids() {
        let ids: Vec<String> = [
            "tests/test_app.py::test_value",
            "tests/test_app.py::test_other",
            "tests/test_cli.py::test_value",
            "tests::value_is_two",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let cases: [(&str, usize, &[&str]); 4] = [
            ("tests/test_app.py::test_valeu", 1, &["tests/test_app.py::test_value"]),
            ("tests/test_app.py::test_value", 2, &["tests/test_app.py::test_value", "tests/test_cli.py::test_value"]),
            ("tests::value_is_tow", 1, &["tests::value_is_two"]),
            ("x", 0, &[]),
        ];
        for (target, k, want) in cases {
            assert_eq!(nearest(target, &ids, k), want, "{target}");
        }
        assert!(nearest("a", &[], 3).is_empty());
    }

    #[test]
    fn distances() {
        for (a, b, d) in [("", "", 0), ("abc", "abc", 0), ("abc", "acb", 2), ("kitten", "sitting", 3), ("", "ab", 2)] {
            assert_eq!(distance(a, b), d, "{a} {b}");
        }
    }

    #[test]
    fn the_message_names_the_target_its_neighbours_and_the_flag() {
        let m = message(&[("t::x".into(), vec!["t::y"])], &["tests".into()]);
        assert_eq!(
            m,
            "target `t::x` is not reported by any check on the base; nearest ids that exist: `t::y`; fix the target's id (as the runner prints it), or give --allow-new-target when the agent is to write that test"
        );
        let m = message(&[("t::x".into(), vec![])], &["lint".into(), "tests".into()]);
        assert!(m.contains("(the checks lint, tests named no test)"), "{m}");
    }
}
