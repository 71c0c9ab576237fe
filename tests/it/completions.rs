//! Completions and the man page come from the same clap definitions as
//! `--help`: every subcommand and flag is in them.

use clap::CommandFactory;

use crate::support::TestEnv;

fn visible_subcommands() -> Vec<String> {
    retry_run::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

#[test]
fn completions_for_each_shell_name_every_subcommand() {
    let env = TestEnv::new();
    let subs = visible_subcommands();
    assert!(subs.len() >= 19, "{subs:?}");
    for shell in ["bash", "zsh", "fish"] {
        let out = env.run(env.root(), &["completions", shell]);
        out.assert_code(0);
        for s in &subs {
            assert!(out.stdout.contains(s.as_str()), "{shell} completions lack {s}");
        }
        assert!(out.stdout.contains("max-cost"), "{shell}: flags of subcommands too");
    }
    env.run(env.root(), &["completions", "tcsh"]).assert_code(2);
}

#[test]
fn the_man_page_has_a_section_per_subcommand_with_its_options() {
    let env = TestEnv::new();
    let out = env.run(env.root(), &["man"]);
    out.assert_code(0);
    assert!(out.stdout.starts_with(".ie") && out.stdout.contains(".TH retry-run 1"), "{}", &out.stdout[..200]);
    for s in visible_subcommands() {
        assert!(out.stdout.contains(&format!(".SH \"RETRY-RUN {}\"", s.to_uppercase())), "no section for {s}");
    }
    assert!(out.stdout.contains("max\\-cost") && out.stdout.contains("writable"), "options are rendered");
}
