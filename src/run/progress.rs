//! Progress of `run` (docs/commands.md, `run`): on a terminal, one live line per
//! attempt (phase, elapsed time, gate results as they come), redrawn on
//! stderr; in CI, with `--quiet` or when stderr is not a terminal, plain
//! lines; with `--json`, nothing here: the events themselves go to stdout.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Live,
    Plain,
    Json,
}

impl Mode {
    /// Live on a terminal outside CI; plain otherwise or when `quiet`.
    pub fn pick(json: bool, quiet: bool) -> Mode {
        if json {
            Mode::Json
        } else if quiet || std::env::var_os("CI").is_some() || !std::io::stderr().is_terminal() {
            Mode::Plain
        } else {
            Mode::Live
        }
    }
}

#[derive(Default)]
struct Line {
    attempt: u32,
    max: u32,
    phase: String,
    gates: Vec<String>,
    started: Option<Instant>,
}

impl Line {
    fn text(&self) -> String {
        let secs = self.started.map_or(0, |s| s.elapsed().as_secs());
        let mut t = format!("attempt {}/{} · {} · {}s", self.attempt, self.max, self.phase, secs);
        for g in &self.gates {
            t.push_str(" · ");
            t.push_str(g);
        }
        t
    }
}

pub struct Progress {
    mode: Mode,
    line: Arc<Mutex<Line>>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl Progress {
    pub fn new(mode: Mode) -> Progress {
        let line = Arc::new(Mutex::new(Line::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = (mode == Mode::Live).then(|| {
            let (line, stop) = (Arc::clone(&line), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(l) = line.lock()
                        && l.started.is_some()
                    {
                        let mut err = std::io::stderr().lock();
                        let _ = write!(err, "\r\x1b[2K{}", l.text());
                        let _ = err.flush();
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        });
        Progress { mode, line, stop, ticker }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn attempt(&self, attempt: u32, max: u32) {
        if let Ok(mut l) = self.line.lock() {
            *l = Line { attempt, max, phase: "preparing".into(), gates: Vec::new(), started: Some(Instant::now()) };
        }
        if self.mode == Mode::Plain {
            eprintln!("attempt {attempt}/{max}: started");
        }
    }

    pub fn phase(&self, phase: &str) {
        let (attempt, max) = match self.line.lock() {
            Ok(mut l) => {
                l.phase = phase.to_string();
                (l.attempt, l.max)
            }
            Err(_) => return,
        };
        if self.mode == Mode::Plain {
            eprintln!("attempt {attempt}/{max}: {phase}");
        }
    }

    /// A gate's result: `scope ok`, `pytest FAIL`.
    pub fn gate(&self, result: &str) {
        let (attempt, max) = match self.line.lock() {
            Ok(mut l) => {
                l.gates.push(result.to_string());
                (l.attempt, l.max)
            }
            Err(_) => return,
        };
        if self.mode == Mode::Plain {
            eprintln!("attempt {attempt}/{max}: {result}");
        }
    }

    /// Ends the attempt's line with its outcome.
    pub fn done(&self, outcome: &str) {
        let text = match self.line.lock() {
            Ok(mut l) => {
                l.phase = outcome.to_string();
                let t = l.text();
                l.started = None;
                t
            }
            Err(_) => return,
        };
        match self.mode {
            Mode::Live => eprintln!("\r\x1b[2K{text}"),
            Mode::Plain => eprintln!("{text}"),
            Mode::Json => {}
        }
    }

    /// A message for the user (not in JSON mode, where stdout is events only).
    pub fn say(&self, text: &str) {
        if self.mode != Mode::Json {
            if self.mode == Mode::Live {
                eprint!("\r\x1b[2K");
            }
            eprintln!("{text}");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}
