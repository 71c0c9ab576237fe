//! The user's git identity, as git's config gives it (`user.name`,
//! `user.email`, the repository's config over the global one): who a
//! review is by unless `--by` says.

use super::Repo;

impl Repo {
    /// `Name <email>` (or `Name` without an email); `None` when no
    /// `user.name` is configured.
    pub fn identity(&self) -> Option<String> {
        let config = self.repo.config().ok()?.snapshot().ok()?;
        let name = config.get_string("user.name").ok().map(|n| n.trim().to_string()).filter(|n| !n.is_empty())?;
        match config.get_string("user.email").ok().map(|e| e.trim().to_string()).filter(|e| !e.is_empty()) {
            Some(email) => Some(format!("{name} <{email}>")),
            None => Some(name),
        }
    }
}
