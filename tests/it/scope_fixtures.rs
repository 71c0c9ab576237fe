//! Every `[[scope]]` case of every fixture, in commit and working-tree mode.

use crate::support::{HeadMode, TestEnv, all_fixtures};

#[test]
fn every_fixture_case() {
    let mut ran = 0;
    for fixture in all_fixtures() {
        for mode in [HeadMode::Commit, HeadMode::Worktree] {
            let cases: Vec<_> = fixture.scope.iter().filter(|c| c.applies_to(mode)).collect();
            if cases.is_empty() {
                continue;
            }
            let env = TestEnv::new();
            let repo = fixture.build(&env, "repo", mode);
            for case in cases {
                let mut args =
                    vec!["scope".to_string(), "--base".into(), "main".into(), "--format".into(), "json".into()];
                if mode == HeadMode::Commit {
                    args.extend(["--head".into(), "feature".into()]);
                }
                args.extend(case.allow.iter().map(|g| format!("--allow={g}")));
                args.extend(case.deny.iter().map(|g| format!("--deny={g}")));
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let run = env.run(&repo, &argv);
                let what = format!(
                    "fixture {} ({}; {mode:?}), allow {:?} deny {:?}",
                    fixture.name, fixture.description, case.allow, case.deny
                );
                assert_eq!(
                    run.code,
                    if case.violations.is_empty() { 0 } else { 1 },
                    "{what}: exit code\n{}{}",
                    run.stdout,
                    run.stderr
                );
                let json = run.json();
                assert_eq!(json["checked"], case.checked, "{what}: checked\n{}", run.stdout);
                let got: Vec<[String; 3]> = json["violations"]
                    .as_array()
                    .expect("violations")
                    .iter()
                    .map(|v| {
                        [
                            v["path"].as_str().expect("path").to_string(),
                            v["reason"].as_str().expect("reason").to_string(),
                            v["rule"].as_str().unwrap_or("").to_string(),
                        ]
                    })
                    .collect();
                assert_eq!(got, case.violations, "{what}\n{}", run.stdout);
                if mode == HeadMode::Worktree {
                    assert_eq!(json["head"], "worktree");
                }
                ran += 1;
            }
        }
    }
    assert!(ran >= 10, "only {ran} scope cases ran");
}
