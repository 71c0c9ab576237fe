//! Progress of `run` (docs/commands.md, `run`): on a terminal, one live line
//! per attempt (phase, elapsed time, gate results as they come), redrawn on
//! stderr; in CI, with `--quiet` or when stderr is not a terminal, plain lines;
//! with `--json`, nothing here: the events themselves go to stdout.
//!
//! Several tasks at once (`run -j`, docs/fleets.md): plain lines start with
//! `[task]`, and on a terminal a [`Board`] redraws one live line per
//! running task.
//!
//! What a line quotes (a phase, a gate's result, an outcome, a message that
//! may hold the agent's text or file names) is shown with control
//! characters made visible ([`visible`]): the only escape sequences written
//! here are the redraws' own.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::text::visible;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Live,
    Plain,
    Json,
}

impl Mode {
    /// Live on a terminal outside CI; plain otherwise or when `quiet`.
    pub(crate) fn pick(json: bool, quiet: bool) -> Mode {
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
        visible(&t).into_owned()
    }
}

pub(crate) struct Progress {
    mode: Mode,
    line: Arc<Mutex<Line>>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
    /// With several tasks at once: this task's id, before each plain line.
    label: Option<String>,
    board: Option<Arc<Board>>,
}

/// The live lines of several tasks at once, redrawn together on stderr.
pub(crate) struct Board {
    slots: Mutex<BoardState>,
    stop: Arc<AtomicBool>,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Default)]
struct BoardState {
    slots: Vec<(String, Arc<Mutex<Line>>)>,
    /// Lines drawn last time, to go back over.
    drawn: usize,
}

impl BoardState {
    fn erase(&mut self, err: &mut dyn Write) {
        if self.drawn > 0 {
            let _ = write!(err, "\x1b[{}A\r\x1b[J", self.drawn);
        }
        self.drawn = 0;
    }

    fn draw(&mut self, err: &mut dyn Write) {
        self.erase(err);
        for (task, line) in &self.slots {
            if let Ok(l) = line.lock()
                && l.started.is_some()
            {
                let _ = writeln!(err, "{task}: {}", l.text());
                self.drawn += 1;
            }
        }
        let _ = err.flush();
    }
}

impl Board {
    pub(crate) fn new() -> Arc<Board> {
        let board = Arc::new(Board {
            slots: Mutex::new(BoardState::default()),
            stop: Arc::new(AtomicBool::new(false)),
            ticker: Mutex::new(None),
        });
        let (b, stop) = (Arc::clone(&board), Arc::clone(&board.stop));
        let t = std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(mut s) = b.slots.lock() {
                    s.draw(&mut std::io::stderr().lock());
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        if let Ok(mut ticker) = board.ticker.lock() {
            *ticker = Some(t);
        }
        board
    }

    /// A line above the live ones, kept.
    pub(crate) fn say(&self, text: &str) {
        if let Ok(mut s) = self.slots.lock() {
            let mut err = std::io::stderr().lock();
            s.erase(&mut err);
            let _ = writeln!(err, "{}", visible(text));
            s.draw(&mut err);
        }
    }

    /// Stops redrawing and clears the live lines.
    pub(crate) fn close(&self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
        if let Ok(mut s) = self.slots.lock() {
            s.slots.clear();
            s.erase(&mut std::io::stderr().lock());
        }
    }

    fn add(&self, task: &str, line: Arc<Mutex<Line>>) {
        if let Ok(mut s) = self.slots.lock() {
            s.slots.push((task.to_string(), line));
        }
    }

    fn remove(&self, line: &Arc<Mutex<Line>>) {
        if let Ok(mut s) = self.slots.lock() {
            s.slots.retain(|(_, l)| !Arc::ptr_eq(l, line));
        }
    }
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Board")
    }
}

/// How a task shows its progress when it runs among others.
#[derive(Debug, Clone, Default)]
pub(crate) struct Shared {
    /// On a terminal: the board all running tasks draw on.
    pub board: Option<Arc<Board>>,
}

impl Progress {
    pub(crate) fn new(mode: Mode) -> Progress {
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
        Progress { mode, line, stop, ticker, label: None, board: None }
    }

    /// Progress of task `task` among others: plain lines labelled with its
    /// id; live, on the shared board.
    pub(crate) fn among(mode: Mode, task: &str, shared: &Shared) -> Progress {
        match (&shared.board, mode) {
            (Some(board), Mode::Live) => {
                let line = Arc::new(Mutex::new(Line::default()));
                board.add(task, Arc::clone(&line));
                Progress {
                    mode,
                    line,
                    stop: Arc::new(AtomicBool::new(false)),
                    ticker: None,
                    label: Some(task.to_string()),
                    board: Some(Arc::clone(board)),
                }
            }
            _ => {
                let mode = if mode == Mode::Live { Mode::Plain } else { mode };
                let mut p = Progress::new(mode);
                p.label = Some(task.to_string());
                p
            }
        }
    }

    /// A plain line, labelled when the task runs among others.
    fn plain(&self, text: &str) {
        let text = visible(text);
        match &self.label {
            Some(task) => crate::console::errln!("[{task}] {text}"),
            None => crate::console::errln!("{text}"),
        }
    }

    pub(crate) fn attempt(&self, attempt: u32, max: u32) {
        if let Ok(mut l) = self.line.lock() {
            *l = Line { attempt, max, phase: "preparing".into(), gates: Vec::new(), started: Some(Instant::now()) };
        }
        if self.mode == Mode::Plain {
            self.plain(&format!("attempt {attempt}/{max}: started"));
        }
    }

    pub(crate) fn phase(&self, phase: &str) {
        let (attempt, max) = match self.line.lock() {
            Ok(mut l) => {
                l.phase = phase.to_string();
                (l.attempt, l.max)
            }
            Err(_) => return,
        };
        if self.mode == Mode::Plain {
            self.plain(&format!("attempt {attempt}/{max}: {phase}"));
        }
    }

    /// A gate's result: `scope ok`, `pytest FAIL`.
    pub(crate) fn gate(&self, result: &str) {
        let (attempt, max) = match self.line.lock() {
            Ok(mut l) => {
                l.gates.push(result.to_string());
                (l.attempt, l.max)
            }
            Err(_) => return,
        };
        if self.mode == Mode::Plain {
            self.plain(&format!("attempt {attempt}/{max}: {result}"));
        }
    }

    /// Ends the attempt's line with its outcome.
    pub(crate) fn done(&self, outcome: &str) {
        let text = match self.line.lock() {
            Ok(mut l) => {
                l.phase = outcome.to_string();
                let t = l.text();
                l.started = None;
                t
            }
            Err(_) => return,
        };
        match (self.mode, &self.board, &self.label) {
            (Mode::Live, Some(board), Some(task)) => board.say(&format!("{task}: {text}")),
            (Mode::Live, _, _) => crate::console::errln!("\r\x1b[2K{text}"),
            (Mode::Plain, _, _) => self.plain(&text),
            (Mode::Json, _, _) => {}
        }
    }

    /// A message for the user (not in JSON mode, where stdout is events only).
    pub(crate) fn say(&self, text: &str) {
        match (self.mode, &self.board) {
            (Mode::Json, _) => {}
            (Mode::Live, Some(board)) => match &self.label {
                Some(task) => board.say(&format!("{task}: {text}")),
                None => board.say(text),
            },
            (Mode::Live, None) => crate::console::err!("\r\x1b[2K{}\n", visible(text)),
            (Mode::Plain, _) => self.plain(text),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(board) = &self.board {
            board.remove(&self.line);
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_shows_the_controls_it_quotes() {
        let l = Line {
            attempt: 1,
            max: 3,
            phase: "CHECK_FAILURE".into(),
            gates: vec!["t\x1b[2J FAIL".into(), "\u{9b}\u{202e}".into()],
            started: None,
        };
        assert_eq!(l.text(), "attempt 1/3 · CHECK_FAILURE · 0s · t\\x1b[2J FAIL · \\u{9b}\\u{202e}");
    }
}
