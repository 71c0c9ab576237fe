//! The sandbox's network proxy: a confined process reaches the network only
//! through it, and it lets through only the hosts of the sandbox's network
//! list (`[sandbox] network`, `--network`).
//!
//! A confined process lives in a network namespace of its own that has
//! nothing but loopback, so it cannot open a connection to the outside
//! itself. The proxy runs outside that namespace and listens on a UNIX
//! socket, which, being a path in the filesystem, can be reached from any
//! network namespace. Inside the namespace [`forward`] listens on 127.0.0.1
//! and hands each connection to that socket: programs find an ordinary HTTP
//! proxy at `http://127.0.0.1:PORT` ([`proxy_env`]), and an allowed loopback
//! address (a test model server) at its usual address.
//!
//! The proxy speaks the two forms clients use with a proxy: `CONNECT
//! host:port` (HTTPS, or any TCP, tunnelled as bytes: the proxy never sees
//! inside TLS) and plain HTTP in absolute form (`GET http://host/path`),
//! forwarded in origin form. It decides on the host and port the request
//! names before a byte reaches any host, and records every connection as one
//! JSON line ([`Connection`]).
//!
//! - the rules and the request head are pure ([`parse_rule`], [`allowed`],
//!   [`parse_head`], which reads the head with `httparse`), tested as
//!   tables beside them;
//! - [`start`] runs the proxy, [`forward`] the forwarder inside the
//!   namespace: each connection is a tokio task, all of them on one thread
//!   (the proxy's own, and one inside the namespace), and the proxy serves
//!   at most [`MAX_OPEN`] at once, so a confined process that opens
//!   thousands of connections costs the process running the proxy no
//!   thread; past the bound, a connection gets a 503 that says why.
//!
//! Where no network namespace can be made, [`start`] also listens on TCP
//! 127.0.0.1 and programs are pointed at that port through [`proxy_env`]:
//! the proxy then filters what those programs send through it, and nothing
//! stops a program that ignores the variables.

mod forwarding;
mod heads;
pub(crate) mod listening;
mod rules;
mod serving;
#[cfg(test)]
mod tests;

pub use forwarding::*;
pub use heads::*;
pub use rules::*;
pub use serving::*;
