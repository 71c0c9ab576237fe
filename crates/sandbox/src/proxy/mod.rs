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

use std::time::Duration;

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

/// How long a client has to send its whole request head.
pub(super) const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long reaching an allowed host may take, every address it resolves to
/// included.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest request head the proxy reads.
pub(super) const MAX_HEAD: usize = 64 * 1024;
/// The size of the buffer of each direction of a relayed connection.
pub(super) const PIPE_BUFFER: usize = 64 * 1024;
/// How long the proxy waits, after its own answer, for the client to close.
pub(super) const LINGER: Duration = Duration::from_secs(2);

/// What a rule or a request may name, for the error of a rule.
pub(super) const EXPECTED: &str = "expected host, host:port, *.domain, *.domain:port, IPv4:port or [IPv6]:port \
                        (e.g. api.openai.com, *.anthropic.com, 127.0.0.1:8080, [::1]:443)";

/// The environment that points a confined process's programs at the proxy
/// listening on `port` of 127.0.0.1 (the forwarder's port inside a network
/// namespace, [`Proxy::tcp_port`] without one).
///
/// - `http_proxy`, `https_proxy`, `all_proxy` and their upper-case twins,
///   all `http://127.0.0.1:PORT`: each client reads its own set. curl reads
///   `http_proxy` only in lower case (and `HTTPS_PROXY`, `ALL_PROXY` in
///   either case); Python (urllib, requests, httpx), Go, reqwest, Bun, Deno
///   and undici's `EnvHttpProxyAgent` read either case, lower case first
///   where both are set; `ALL_PROXY` covers the clients that fall back to it
///   (curl, requests, httpx, reqwest). An HTTPS URL goes through as a
///   CONNECT tunnel, an http:// one in absolute form.
/// - `NODE_USE_ENV_PROXY=1`: Node's built-in `fetch` and `http`/`https`
///   ignore the variables above unless it is set (Node 24, and 22.21 on its
///   22 line); older Node ignores it, and a Node program that builds its own
///   agent still has to read them itself.
/// - `no_proxy` and `NO_PROXY` = `localhost,127.0.0.1,::1`, replacing any
///   the user had: loopback connections stay inside the namespace, where
///   they reach a server the confined process started itself and the
///   allowed loopback hosts [`forward`] mirrors at their own ports; sent
///   through the proxy, which runs outside the namespace, they would reach
///   the host's loopback instead and be refused. Go never proxies loopback
///   addresses anyway. Without a namespace, loopback is the host's either
///   way.
///
/// Programs that read none of these (Java, without its own `-D` options)
/// do not reach the network from a namespace.
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut env: Vec<(String, String)> = ["http_proxy", "https_proxy", "all_proxy"]
        .iter()
        .flat_map(|n| [n.to_string(), n.to_ascii_uppercase()])
        .map(|n| (n, url.clone()))
        .collect();
    for n in ["no_proxy", "NO_PROXY"] {
        env.push((n.to_string(), "localhost,127.0.0.1,::1".to_string()));
    }
    env.push(("NODE_USE_ENV_PROXY".to_string(), "1".to_string()));
    env
}
