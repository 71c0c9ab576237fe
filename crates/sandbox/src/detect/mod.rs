//! Detect mode's eyes: what an unconfined agent and its checks connect
//! to, seen as they do it ([`observe`]), and read, judged and said
//! ([`seen`]).

pub mod observe;
pub mod seen;
