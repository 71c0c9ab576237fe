//! `retry-run ui-page` (hidden, for the benchmark and tests): renders one
//! page of the web view without the server and prints it, or with
//! `--repeat N` prints how long rendering took (the median of N, and the
//! first render's).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use clap::Args;

use super::{CliError, exit};
use crate::git::Repo;
use crate::record::{Store, Summaries};
use crate::ui::{Against, PageLayout, Route, Site, pages};

/// Renders one page of `retry-run ui` to stdout (no server).
#[derive(Debug, Args)]
pub struct UiPageArgs {
    /// A task's page (without it, the task list).
    #[arg(long)]
    pub task: Option<String>,
    /// An attempt of `--task`.
    #[arg(long, requires = "task")]
    pub attempt: Option<u32>,
    /// The attempt against the previous one rather than the base.
    #[arg(long)]
    pub previous: bool,
    /// The attempt's diff side by side.
    #[arg(long)]
    pub split: bool,
    /// Render N times and print the median and slowest times and the
    /// first render's (every log read) in milliseconds instead of the
    /// page.
    #[arg(long)]
    pub repeat: Option<usize>,
}

pub(super) fn run(dir: &Path, args: UiPageArgs) -> Result<i32, CliError> {
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let summaries = Summaries::new(store.clone());
    let site = Site { repo: &repo, store: &store, summaries: &summaries, token: "t" };
    let route = match (args.task, args.attempt) {
        (None, _) => Route::Tasks { state: None, query: None },
        (Some(id), None) => Route::Task { id, refused: None },
        (Some(id), Some(n)) => Route::Attempt {
            id,
            n,
            against: if args.previous { Against::Previous } else { Against::Base },
            layout: if args.split { PageLayout::Split } else { PageLayout::Unified },
        },
    };
    let mut out = std::io::stdout().lock();
    match args.repeat {
        None => {
            let page = pages::page(&site, &route);
            out.write_all(&page.body)?;
            Ok(if page.status == 200 { exit::OK } else { exit::FOUND })
        }
        Some(n) => {
            // One cache of the logs' summaries across the renders, as the
            // server keeps one across requests: the first render reads
            // every log, the others only those written since.
            let mut ms: Vec<f64> = (0..n.max(1))
                .map(|_| {
                    let t = Instant::now();
                    let page = pages::page(&site, &route);
                    std::hint::black_box(page);
                    t.elapsed().as_secs_f64() * 1000.0
                })
                .collect();
            let first = ms[0];
            ms.sort_by(f64::total_cmp);
            writeln!(out, "median_ms {:.2} max_ms {:.2} first_ms {first:.2}", ms[ms.len() / 2], ms[ms.len() - 1])?;
            Ok(exit::OK)
        }
    }
}
