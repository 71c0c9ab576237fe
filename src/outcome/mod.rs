//! Pure decisions about an attempt's outcome.

pub mod check;
pub mod resume;
