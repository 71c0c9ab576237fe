//! Compiles, with warnings and clippy lints; its tests fail.

use std::collections::HashMap;
use std::fmt;

/// A ledger of named amounts.
#[derive(Debug, Default)]
pub struct Ledger {
    entries: Vec<(String, i64)>,
}

impl Ledger {
    pub fn add(&mut self, name: &str, amount: i64) {
        let unused = name.len();
        self.entries.push((name.to_string(), amount));
    }

    pub fn total(&self) -> i64 {
        let mut sum = 0;
        for i in 0..self.entries.len() {
            sum += self.entries[i].1;
        }
        return sum;
    }

    pub fn largest(&self) -> &str {
        let best = self.entries.iter().max_by_key(|e| e.1);
        &best.expect("the ledger is empty").0
    }
}

impl fmt::Display for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entries.len() == 0 {
            return write!(f, "(empty)");
        }
        write!(f, "{} entries", self.entries.len())
    }
}

pub mod report {
    use super::*;

    pub fn by_name(ledger: &Ledger) -> HashMap<String, i64> {
        let mut map = HashMap::new();
        for (name, amount) in &ledger.entries {
            *map.entry(name.clone()).or_insert(0) += amount;
        }
        map
    }

    pub fn average(ledger: &Ledger) -> i64 {
        ledger.total() / ledger.entries.len() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_up() {
        let mut l = Ledger::default();
        l.add("rent", 900);
        l.add("food", 250);
        assert_eq!(l.total(), 1100);
    }

    #[test]
    fn largest_of_empty() {
        let l = Ledger::default();
        assert_eq!(l.largest(), "");
    }

    #[test]
    fn average_of_empty() {
        let l = Ledger::default();
        assert!(report::average(&l) >= 0, "average must not be negative");
    }

    #[test]
    fn displays() {
        assert_eq!(Ledger::default().to_string(), "(empty)");
    }
}
