//! The watch of the user's checkout for a whole run: started on another
//! thread when the run begins (inotify takes a while to set up on a large
//! checkout), ready by the first agent.

use std::path::Path;
use std::time::Duration;

use super::Outside;
use crate::git::Repo;

/// The watch of the user's checkout: started on another thread when the
/// run begins (while the worktree is prepared), ready by the first agent.
pub(crate) struct Watch {
    outside: Option<Outside>,
    starting: Option<std::thread::JoinHandle<Outside>>,
    /// How it was set up, once retired ([`Watch::retire`]).
    retired: Option<Cost>,
    /// Time spent marking and reading it in the current attempt.
    pub spent: Duration,
}

impl Watch {
    pub(crate) fn start(repo: &Repo, skip: &Path) -> Watch {
        let (root, skip) = (repo.workdir().map(Path::to_path_buf), skip.to_path_buf());
        Watch {
            outside: None,
            starting: Some(std::thread::spawn(move || Outside::start(root.as_deref(), &skip))),
            retired: None,
            spent: Duration::ZERO,
        }
    }

    /// The watch ended once nothing more of this run will be looked for
    /// in it: the rest of the run goes on while it is closed on a thread of
    /// its own (closing an inotify descriptor waits for the kernel to free
    /// its marks, 10-20 ms with a watch per directory of a large checkout).
    pub(crate) fn retire(&mut self) {
        let Some(outside) = self.outside.take() else { return };
        self.retired = Some(Cost::of(&outside));
        std::thread::spawn(move || drop(outside));
    }

    /// How the watch was set up, for the attempt's record.
    pub(crate) fn cost(&mut self, skip: &Path, say: &dyn Fn(&str)) -> Cost {
        match self.retired {
            Some(c) => c,
            None => Cost::of(self.ready(skip, say)),
        }
    }

    /// The watch, once ready; says once when it falls back to stat data.
    pub(crate) fn ready(&mut self, skip: &Path, say: &dyn Fn(&str)) -> &mut Outside {
        let starting = &mut self.starting;
        self.outside.get_or_insert_with(|| {
            let w = starting.take().and_then(|t| t.join().ok()).unwrap_or_else(|| Outside::start(None, skip));
            if let Some(why) = &w.fallback {
                say(&format!("watching your checkout by stat data instead of inotify: {why}"));
            }
            w
        })
    }
}

/// How the watch was set up: how long it took, and whether by stat data
/// rather than inotify.
#[derive(Clone, Copy)]
pub(crate) struct Cost {
    pub setup: Duration,
    pub by_stat: bool,
}

impl Cost {
    fn of(outside: &Outside) -> Cost {
        Cost { setup: outside.setup, by_stat: outside.fallback.is_some() }
    }
}
