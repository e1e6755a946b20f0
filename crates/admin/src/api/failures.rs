//! Slows down guessing (the admin token, a password): a key (a client — an IPv4 address or
//! an IPv6 /64 —, or an account and a client) may fail [`FailedAttempts`]'s `free` times;
//! after that, each further attempt must wait longer since its last failure: 1 s after the
//! first failure past the free ones, then 2 s, 4 s, … up to `max_wait`. Nothing is locked:
//! an attempt made after its wait is checked as usual, and other keys are not affected.
//! A key's failures are forgotten `forget_after` its last one, or at its first success.
//!
//! Memory is bounded: at most `capacity` keys are remembered (the one whose last failure is
//! oldest is forgotten first), and forgotten keys are dropped once per `forget_after`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed attempts (401) a client may make before it is slowed down (429 meanwhile).
pub const MAX_FAILURES: u32 = 5;

/// The longest wait between two attempts of a slowed-down client.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// A client's failed attempts are forgotten this long after its last one.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Clients whose failures are remembered at once (the oldest window is forgotten first).
pub(crate) const MAX_TRACKED_CLIENTS: usize = 10_000;

/// The wait after the first failure past the free ones; it doubles with each next one.
const FIRST_WAIT: Duration = Duration::from_secs(1);

/// Who failed: the client's address, IPv6 cut to its /64 (one host's usual share). `None`:
/// the address is unknown (a router served without connection info), one shared client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Client(Option<IpAddr>);

impl Client {
    pub fn new(ip: Option<IpAddr>) -> Self {
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
struct Record {
    failures: u32,
    last: Instant,
}

#[derive(Debug)]
struct State<K> {
    keys: HashMap<K, Record>,
    pruned: Instant,
}

/// Failed attempts per key (a client, an account and a client), slowed down past the free
/// ones.
#[derive(Debug)]
pub struct FailedAttempts<K = Client> {
    free: u32,
    max_wait: Duration,
    forget_after: Duration,
    capacity: usize,
    state: Mutex<State<K>>,
}

impl<K: std::hash::Hash + Eq + Clone> FailedAttempts<K> {
    /// `free` failures are not slowed down; the waits after them double from 1 s up to
    /// `max_wait`; a key is forgotten `forget_after` its last failure.
    pub fn new(free: u32, max_wait: Duration, forget_after: Duration, capacity: usize) -> Self {
        Self {
            free: free.max(1),
            max_wait,
            forget_after: forget_after.max(max_wait),
            capacity: capacity.max(1),
            state: Mutex::new(State {
                keys: HashMap::new(),
                pruned: Instant::now(),
            }),
        }
    }

    /// The wait after a key's `failures`-th failure.
    fn wait_after(&self, failures: u32) -> Duration {
        if failures < self.free {
            return Duration::ZERO;
        }
        let doublings = (failures - self.free).min(30);
        FIRST_WAIT
            .saturating_mul(1u32 << doublings)
            .min(self.max_wait)
    }

    fn wait_of(&self, record: &Record, now: Instant) -> Option<Duration> {
        if now >= record.last + self.forget_after {
            return None;
        }
        let until = record.last + self.wait_after(record.failures);
        (now < until).then(|| until - now)
    }

    /// How long `key` must wait before its next attempt is checked, when it must.
    pub fn blocked(&self, key: &K, now: Instant) -> Option<Duration> {
        let state = self.state.lock().ok()?;
        self.wait_of(state.keys.get(key)?, now)
    }

    /// Counts a failure of `key`; true when this one used up its free failures (log it once).
    pub fn failed(&self, key: K, now: Instant) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        self.count(&mut state, key, now)
    }

    /// An attempt that is counted as a failure before it is checked (so that attempts made
    /// at once cannot all pass): `Err(wait)` when `key` must wait first (nothing counted);
    /// else the failure is counted and [`Self::succeeded`] or [`Self::forgive`] takes it
    /// back when the attempt succeeds.
    pub fn attempt(&self, key: K, now: Instant) -> Result<(), Duration> {
        let Ok(mut state) = self.state.lock() else {
            return Ok(());
        };
        if let Some(wait) = state.keys.get(&key).and_then(|r| self.wait_of(r, now)) {
            return Err(wait);
        }
        self.count(&mut state, key, now);
        Ok(())
    }

    fn count(&self, state: &mut State<K>, key: K, now: Instant) -> bool {
        self.prune(state, now);
        if !state.keys.contains_key(&key) && state.keys.len() >= self.capacity {
            // Full: forget the key whose last failure is oldest, the closest to forgotten.
            let oldest = state
                .keys
                .iter()
                .min_by_key(|(_, r)| r.last)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                state.keys.remove(&oldest);
            }
        }
        let forget_after = self.forget_after;
        let r = state.keys.entry(key).or_insert(Record {
            failures: 0,
            last: now,
        });
        if now >= r.last + forget_after {
            r.failures = 0;
        }
        r.failures = r.failures.saturating_add(1);
        r.last = now;
        r.failures == self.free
    }

    /// Moves `key`'s last failure to `now` (an attempt counted by [`Self::attempt`] turned
    /// out a failure only now, after a slow check): its wait starts from the answer.
    pub fn touch(&self, key: &K, now: Instant) {
        if let Ok(mut state) = self.state.lock()
            && let Some(r) = state.keys.get_mut(key)
        {
            r.last = r.last.max(now);
        }
    }

    /// Takes back one failure counted by [`Self::attempt`] (the attempt succeeded).
    pub fn forgive(&self, key: &K) {
        if let Ok(mut state) = self.state.lock()
            && let Some(r) = state.keys.get_mut(key)
        {
            r.failures = r.failures.saturating_sub(1);
            if r.failures == 0 {
                state.keys.remove(key);
            }
        }
    }

    /// Forgets `key`'s failures (it just sent the right token or password).
    pub fn succeeded(&self, key: &K) {
        if let Ok(mut state) = self.state.lock() {
            state.keys.remove(key);
        }
    }

    /// Drops forgotten keys and gives the memory back, once per `forget_after`.
    fn prune(&self, state: &mut State<K>, now: Instant) {
        if now < state.pruned + self.forget_after {
            return;
        }
        let forget_after = self.forget_after;
        state.keys.retain(|_, r| now < r.last + forget_after);
        state.keys.shrink_to_fit();
        state.pruned = now;
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state.lock().map(|s| s.keys.len()).unwrap_or(0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const SEC: Duration = Duration::from_secs(1);
    const MINUTE: Duration = Duration::from_secs(60);

    fn client(s: &str) -> Client {
        Client::new(Some(s.parse().unwrap()))
    }

    #[test]
    fn past_its_free_failures_a_client_waits_longer_each_time_but_is_never_locked() {
        let limit = FailedAttempts::new(5, MINUTE, 15 * MINUTE, 100);
        let t0 = Instant::now();
        let a = client("192.0.2.1");
        for i in 0..4 {
            assert!(!limit.failed(a, t0));
            assert_eq!(limit.blocked(&a, t0 + i * SEC), None);
        }
        assert!(limit.failed(a, t0), "the fifth uses up the free ones");
        assert_eq!(limit.blocked(&a, t0), Some(SEC));
        assert_eq!(limit.blocked(&client("192.0.2.2"), t0), None);
        // After its wait, the next attempt is checked; a failure doubles the wait.
        let mut t = t0 + SEC;
        assert_eq!(limit.blocked(&a, t), None);
        for expected in [2, 4, 8, 16, 32, 60, 60] {
            limit.failed(a, t);
            let wait = limit.blocked(&a, t).unwrap();
            assert_eq!(wait, Duration::from_secs(expected));
            t += wait;
            assert_eq!(limit.blocked(&a, t), None, "never locked");
        }
        // Forgotten a while after the last failure.
        t += 15 * MINUTE;
        assert!(!limit.failed(a, t));
        assert_eq!(limit.blocked(&a, t), None);
    }

    #[test]
    fn attempts_made_at_once_are_counted_before_they_are_checked() {
        let limit = FailedAttempts::new(5, MINUTE, 15 * MINUTE, 100);
        let (t0, a) = (Instant::now(), client("192.0.2.1"));
        let passed = (0..100).filter(|_| limit.attempt(a, t0).is_ok()).count();
        assert_eq!(passed, 5);
        assert_eq!(limit.attempt(a, t0), Err(SEC));
        // A success takes its attempt back.
        limit.forgive(&a);
        assert_eq!(limit.blocked(&a, t0), None);
    }

    #[test]
    fn the_right_token_forgets_the_failures() {
        let limit = FailedAttempts::new(2, MINUTE, MINUTE, 100);
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
        let limit = FailedAttempts::new(5, MINUTE, MINUTE, 1000);
        let t0 = Instant::now();
        for i in 0..50_000u32 {
            let ip = IpAddr::from(i.to_be_bytes());
            limit.failed(Client::new(Some(ip)), t0);
        }
        assert!(limit.len() <= 1000, "{}", limit.len());
        // Forgotten keys are dropped.
        limit.failed(client("192.0.2.1"), t0 + 2 * MINUTE);
        assert_eq!(limit.len(), 1);
    }
}
