//! Slows down guessing the admin token: a client (an IPv4 address, or an IPv6 /64 network)
//! that failed [`FailedAttempts::max_failures`] times within a window is refused until the
//! window ends, without its token being checked.
//!
//! Memory is bounded: at most `capacity` clients are remembered (the one whose window is
//! oldest is forgotten first), and ended windows are dropped once per window.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Who failed: the peer's address, IPv6 cut to its /64 (one host's usual share). `None`:
/// the address is unknown (a router served without connection info), one shared client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Client(Option<IpAddr>);

impl Client {
    pub(crate) fn new(ip: Option<IpAddr>) -> Self {
        Self(ip.map(|ip| match ip.to_canonical() {
            IpAddr::V6(v6) => {
                let mut octets = v6.octets();
                octets[8..].fill(0);
                IpAddr::from(octets)
            }
            v4 => v4,
        }))
    }
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(IpAddr::V6(v6)) => write!(f, "{v6}/64"),
            Some(ip) => write!(f, "{ip}"),
            None => f.write_str("unknown"),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

#[derive(Debug)]
struct State<K> {
    clients: HashMap<K, Window>,
    pruned: Instant,
}

/// Failed attempts per key (a client, an account) in fixed windows.
#[derive(Debug)]
pub(crate) struct FailedAttempts<K = Client> {
    max_failures: u32,
    window: Duration,
    capacity: usize,
    state: Mutex<State<K>>,
}

impl<K: std::hash::Hash + Eq + Clone> FailedAttempts<K> {
    pub(crate) fn new(max_failures: u32, window: Duration, capacity: usize) -> Self {
        Self {
            max_failures: max_failures.max(1),
            window,
            capacity: capacity.max(1),
            state: Mutex::new(State {
                clients: HashMap::new(),
                pruned: Instant::now(),
            }),
        }
    }

    /// How long `client` must wait, when it has used up its failures of the current window.
    pub(crate) fn blocked(&self, client: &K, now: Instant) -> Option<Duration> {
        let state = self.state.lock().ok()?;
        let w = state.clients.get(client)?;
        let ends = w.started + self.window;
        (w.failures >= self.max_failures && now < ends).then(|| ends - now)
    }

    /// Counts a failure of `client`; true when this one used up its failures (log it once).
    pub(crate) fn failed(&self, client: K, now: Instant) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        self.prune(&mut state, now);
        if !state.clients.contains_key(&client) && state.clients.len() >= self.capacity {
            // Full of live windows: forget the oldest, closest to its end anyway.
            let oldest = state
                .clients
                .iter()
                .min_by_key(|(_, w)| w.started)
                .map(|(c, _)| c.clone());
            if let Some(oldest) = oldest {
                state.clients.remove(&oldest);
            }
        }
        let window = self.window;
        let w = state.clients.entry(client).or_insert(Window {
            started: now,
            failures: 0,
        });
        if now >= w.started + window {
            *w = Window {
                started: now,
                failures: 0,
            };
        }
        w.failures = w.failures.saturating_add(1);
        w.failures == self.max_failures
    }

    /// Forgets `client`'s failures (it just sent the right token).
    pub(crate) fn succeeded(&self, client: &K) {
        if let Ok(mut state) = self.state.lock() {
            state.clients.remove(client);
        }
    }

    /// Drops ended windows and gives the memory back, once per window.
    fn prune(&self, state: &mut State<K>, now: Instant) {
        if now < state.pruned + self.window {
            return;
        }
        let window = self.window;
        state.clients.retain(|_, w| now < w.started + window);
        state.clients.shrink_to_fit();
        state.pruned = now;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state.lock().map(|s| s.clients.len()).unwrap_or(0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn client(s: &str) -> Client {
        Client::new(Some(s.parse().unwrap()))
    }

    #[test]
    fn a_client_is_blocked_after_its_failures_until_the_window_ends() {
        let limit = FailedAttempts::new(5, MINUTE, 100);
        let t0 = Instant::now();
        let a = client("192.0.2.1");
        for i in 0..4 {
            assert!(!limit.failed(a, t0 + Duration::from_secs(i)));
            assert_eq!(limit.blocked(&a, t0 + Duration::from_secs(i)), None);
        }
        assert!(limit.failed(a, t0 + Duration::from_secs(10)));
        let wait = limit.blocked(&a, t0 + Duration::from_secs(20)).unwrap();
        assert_eq!(wait, Duration::from_secs(40));
        assert_eq!(limit.blocked(&client("192.0.2.2"), t0), None);
        assert_eq!(limit.blocked(&a, t0 + MINUTE), None);
        // A new window starts from scratch.
        assert!(!limit.failed(a, t0 + MINUTE));
        assert_eq!(limit.blocked(&a, t0 + MINUTE), None);
    }

    #[test]
    fn the_right_token_forgets_the_failures() {
        let limit = FailedAttempts::new(2, MINUTE, 100);
        let (t0, a) = (Instant::now(), client("192.0.2.1"));
        limit.failed(a, t0);
        limit.succeeded(&a);
        limit.failed(a, t0);
        assert_eq!(limit.blocked(&a, t0), None);
    }

    #[test]
    fn ipv6_clients_are_their_64_network() {
        assert_eq!(client("2001:db8::1"), client("2001:db8::ffff:2"));
        assert_ne!(client("2001:db8::1"), client("2001:db8:0:1::1"));
        assert_eq!(client("::ffff:192.0.2.1"), client("192.0.2.1"));
        assert_eq!(client("2001:db8::1").to_string(), "2001:db8::/64");
    }

    #[test]
    fn memory_stays_bounded() {
        let limit = FailedAttempts::new(5, MINUTE, 1000);
        let t0 = Instant::now();
        for i in 0..50_000u32 {
            let ip = IpAddr::from(i.to_be_bytes());
            limit.failed(Client::new(Some(ip)), t0);
        }
        assert!(limit.len() <= 1000, "{}", limit.len());
        // Ended windows are dropped.
        limit.failed(client("192.0.2.1"), t0 + 2 * MINUTE);
        assert_eq!(limit.len(), 1);
    }
}
