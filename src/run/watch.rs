//! The watch of the user's checkout for a whole run: started on another
//! thread when the run begins (inotify takes a while to set up on a large
//! checkout), ready by the first agent.

use std::path::Path;
use std::time::Duration;

use super::progress::Progress;
use crate::checkout_watch::Outside;
use crate::git::Repo;

/// The watch of the user's checkout: started on another thread when the
/// run begins (while the worktree is prepared), ready by the first agent.
pub(super) struct Watch {
    outside: Option<Outside>,
    starting: Option<std::thread::JoinHandle<Outside>>,
    /// Time spent marking and reading it in the current attempt.
    pub spent: Duration,
}

impl Watch {
    pub fn start(repo: &Repo, skip: &Path) -> Watch {
        let (root, skip) = (repo.workdir().map(Path::to_path_buf), skip.to_path_buf());
        Watch {
            outside: None,
            starting: Some(std::thread::spawn(move || Outside::start(root.as_deref(), &skip))),
            spent: Duration::ZERO,
        }
    }

    /// The watch, once ready; says once when it falls back to stat data.
    pub fn ready(&mut self, skip: &Path, progress: &Progress) -> &mut Outside {
        let starting = &mut self.starting;
        self.outside.get_or_insert_with(|| {
            let w = starting.take().and_then(|t| t.join().ok()).unwrap_or_else(|| Outside::start(None, skip));
            if let Some(why) = &w.fallback {
                progress.say(&format!(
                    "watching your checkout by stat data instead of inotify ({why}); each attempt walks it"
                ));
            }
            w
        })
    }
}
