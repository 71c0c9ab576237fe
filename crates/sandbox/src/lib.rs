//! retry-run's sandbox: containment of the agent and its checks, a crate of
//! its own that knows nothing of retry-run's loop. What it is asked is one
//! [`Request`] (what to run, where, under which layers, with which paths,
//! network and limits); what it is told by retry-run's config is its own
//! types ([`SandboxMode`], [`SandboxGit`], [`Limits`]), which the config
//! deserializes into.
//!
//! - [`policy`]: the mode resolved once, the secrets, the policy, and
//!   what is reported of it: pure data;
//! - [`request`]: the one request a confined command is started with;
//! - [`launch`]: the outer process that enforces a request: bubblewrap,
//!   or the Landlock-only fallback, or nothing but reaping;
//! - [`supervisor`]: the process that confines one command (its own
//!   executable, `retry-run-supervisor`);
//! - [`layers`]: the kernel's layers: namespaces, Landlock, seccomp, the
//!   limits;
//! - [`proxy`]: the network proxy, by job: rules, request heads, serving,
//!   forwarding;
//! - [`detect`]: detect mode's eyes on the network;
//! - `sys`: the system calls, the one module with `unsafe` code.
//!
//! Reading and executing stay allowed everywhere; writing (creating,
//! removing, renaming, linking, truncating) only beneath the writable paths.

// `unsafe` lives in `sys` alone, each use with its reason.
#![deny(unsafe_code)]

mod console;
pub mod detect;
pub mod launch;
pub mod layers;
pub mod policy;
pub mod programs;
pub mod proxy;
pub mod request;
pub mod supervisor;
#[allow(unsafe_code)]
mod sys;

pub use policy::confinement::Confinement;
pub use policy::env::{EnvChange, away_from_checkout, credentials, looks_like_credential};
pub use policy::mode::{
    Auto, Effective, ModeInForce, SandboxGit, SandboxMode, auto, fallback_gaps, process_limit, resolve,
};
pub use policy::reported::{LimitHit, REFUSED_HOSTS_CAP, limits_hit, refused_hosts, refused_paths};
pub use policy::secrets::{SECRET_FILES, SECRET_STORES, SECRETS, hidden_paths, is_dot_env, other_secrets};
pub use policy::{
    DEVICES, GitPaths, Policy, SHARED_MEMORY, SandboxError, Writable, command_writable, expand, git_writable, policy,
    prepare_state, prepare_writable, quarantine_env, verifier_policy,
};
pub use request::{Found, Layers, Limits, Request};
