//! The kernel's layers a confined process is put in: its own namespaces
//! (through bubblewrap), Landlock, seccomp filters, and the limits.

pub mod landlock;
pub mod limits;
pub mod namespaces;
pub mod seccomp;
