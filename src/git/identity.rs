//! The user's git identity, found as git finds it (`git var
//! GIT_COMMITTER_IDENT`, `git var GIT_AUTHOR_IDENT`): the environment
//! first (`GIT_COMMITTER_NAME`, `GIT_COMMITTER_EMAIL`; `GIT_AUTHOR_*` for
//! an author), then the config (`committer.name` or `author.name`, then
//! `user.name`; the same for the email; the repository's config over the
//! global one), and for the email the `EMAIL` variable last. Who a review
//! is by unless `--by` says; who a land's commit is by.
//!
//! [`resolve`] decides over the values given; [`Repo::identity`] reads
//! them from the process's environment and the repository's config.
//! Unlike git, no name is made up from the system's user database: without
//! one there is no identity, and the caller says what to set.

use std::fmt;

use super::Repo;

/// Whose identity: git keeps a commit's author and committer apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Author,
    Committer,
}

impl Role {
    /// The prefix of its environment variables: `GIT_AUTHOR`, `GIT_COMMITTER`.
    fn env(self) -> &'static str {
        match self {
            Role::Author => "GIT_AUTHOR",
            Role::Committer => "GIT_COMMITTER",
        }
    }

    /// The section of its own config keys: `author`, `committer`.
    fn section(self) -> &'static str {
        match self {
            Role::Author => "author",
            Role::Committer => "committer",
        }
    }
}

/// A name, and an email when one is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub email: Option<String>,
}

impl fmt::Display for Ident {
    /// `Name <email>`, or `Name` without an email.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.email {
            Some(email) => write!(f, "{} <{email}>", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// The identity of `role` from the environment's values (`env`) and the
/// config's (`config`), with git's precedence: for the name
/// `GIT_<ROLE>_NAME`, `<role>.name`, `user.name`; for the email
/// `GIT_<ROLE>_EMAIL`, `<role>.email`, `user.email`, `EMAIL`. A value is
/// cleaned as git cleans it (the `<`, `>` and line breaks that would break
/// an ident line dropped, spaces and `,:;"'\` trimmed from its ends); one
/// empty after that counts as not set. `None` when no name is set.
pub(super) fn resolve(
    role: Role,
    env: impl Fn(&str) -> Option<String>,
    config: impl Fn(&str) -> Option<String>,
) -> Option<Ident> {
    let set = |v: Option<String>| v.map(|v| without_crud(&v)).filter(|v| !v.is_empty());
    let (prefix, section) = (role.env(), role.section());
    let name = set(env(&format!("{prefix}_NAME")))
        .or_else(|| set(config(&format!("{section}.name"))))
        .or_else(|| set(config("user.name")))?;
    let email = set(env(&format!("{prefix}_EMAIL")))
        .or_else(|| set(config(&format!("{section}.email"))))
        .or_else(|| set(config("user.email")))
        .or_else(|| set(env("EMAIL")));
    Some(Ident { name, email })
}

/// `value` as git puts it in an ident line (`strbuf_addstr_without_crud`):
/// control characters, spaces and `,:;<>"\'` trimmed from both ends, `<`,
/// `>` and newlines dropped from the middle.
fn without_crud(value: &str) -> String {
    let crud = |c: char| c <= ' ' || matches!(c, ',' | ':' | ';' | '<' | '>' | '"' | '\\' | '\'');
    value.trim_matches(crud).chars().filter(|c| !matches!(c, '<' | '>' | '\n')).collect()
}

impl Repo {
    /// The identity of `role` as git would use it here, from this
    /// process's environment and the repository's config; `None` when no
    /// name is set.
    pub fn identity(&self, role: Role) -> Option<Ident> {
        let config = self.repo.config().ok().and_then(|mut c| c.snapshot().ok());
        resolve(
            role,
            |key| std::env::var_os(key).map(|v| v.to_string_lossy().into_owned()),
            |key| config.as_ref()?.get_string(key).ok(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_string())
    }

    fn ident(role: Role, env: &[(&str, &str)], config: &[(&str, &str)]) -> Option<String> {
        resolve(role, lookup(env), lookup(config)).map(|i| i.to_string())
    }

    #[test]
    fn the_environment_wins_over_the_config() {
        let config = [("user.name", "Config Name"), ("user.email", "config@example.com")];
        let env = [("GIT_COMMITTER_NAME", "Env Name"), ("GIT_COMMITTER_EMAIL", "env@example.com")];
        assert_eq!(ident(Role::Committer, &env, &config).as_deref(), Some("Env Name <env@example.com>"));
        // Each part on its own: the name from the environment, the email from the config.
        let env = [("GIT_COMMITTER_NAME", "Env Name")];
        assert_eq!(ident(Role::Committer, &env, &config).as_deref(), Some("Env Name <config@example.com>"));
        let env = [("GIT_COMMITTER_EMAIL", "env@example.com")];
        assert_eq!(ident(Role::Committer, &env, &config).as_deref(), Some("Config Name <env@example.com>"));
    }

    #[test]
    fn only_the_environment_is_enough() {
        let env = [("GIT_COMMITTER_NAME", "Env Name"), ("GIT_COMMITTER_EMAIL", "env@example.com")];
        assert_eq!(ident(Role::Committer, &env, &[]).as_deref(), Some("Env Name <env@example.com>"));
    }

    #[test]
    fn author_and_committer_read_their_own_variables_and_keys() {
        let env = [
            ("GIT_AUTHOR_NAME", "Ann"),
            ("GIT_AUTHOR_EMAIL", "ann@example.com"),
            ("GIT_COMMITTER_NAME", "Cid"),
            ("GIT_COMMITTER_EMAIL", "cid@example.com"),
        ];
        assert_eq!(ident(Role::Author, &env, &[]).as_deref(), Some("Ann <ann@example.com>"));
        assert_eq!(ident(Role::Committer, &env, &[]).as_deref(), Some("Cid <cid@example.com>"));
        // An author's variables are not a committer's.
        let env = [("GIT_AUTHOR_NAME", "Ann")];
        assert_eq!(ident(Role::Committer, &env, &[]), None);
        // committer.name and committer.email come before user.*; author.* is not read for a committer.
        let config = [
            ("user.name", "User"),
            ("user.email", "user@example.com"),
            ("committer.name", "Committer"),
            ("author.email", "author@example.com"),
        ];
        assert_eq!(ident(Role::Committer, &[], &config).as_deref(), Some("Committer <user@example.com>"));
        assert_eq!(ident(Role::Author, &[], &config).as_deref(), Some("User <author@example.com>"));
    }

    #[test]
    fn the_email_falls_back_to_the_email_variable_last() {
        let env = [("EMAIL", "mail@example.com")];
        assert_eq!(ident(Role::Committer, &env, &[("user.name", "U")]).as_deref(), Some("U <mail@example.com>"));
        let config = [("user.name", "U"), ("user.email", "user@example.com")];
        assert_eq!(ident(Role::Committer, &env, &config).as_deref(), Some("U <user@example.com>"));
        // A name without any email.
        assert_eq!(
            resolve(Role::Committer, lookup(&[]), lookup(&[("user.name", "U")])),
            Some(Ident { name: "U".into(), email: None })
        );
    }

    #[test]
    fn without_a_name_there_is_no_identity() {
        assert_eq!(ident(Role::Committer, &[], &[]), None);
        let env = [("GIT_COMMITTER_EMAIL", "c@example.com"), ("EMAIL", "e@example.com")];
        assert_eq!(ident(Role::Committer, &env, &[("user.email", "u@example.com")]), None);
    }

    #[test]
    fn values_are_cleaned_as_git_cleans_them_and_empty_ones_are_not_set() {
        let env = [("GIT_COMMITTER_NAME", " \"Ann <A> Lee\",\n"), ("GIT_COMMITTER_EMAIL", "<ann@example.com>")];
        assert_eq!(ident(Role::Committer, &env, &[]).as_deref(), Some("Ann A Lee <ann@example.com>"));
        let env = [("GIT_COMMITTER_NAME", "  "), ("GIT_COMMITTER_EMAIL", "")];
        let config = [("user.name", "Config Name"), ("user.email", "config@example.com")];
        assert_eq!(ident(Role::Committer, &env, &config).as_deref(), Some("Config Name <config@example.com>"));
    }
}
