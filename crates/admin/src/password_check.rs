//! Password checks on a fixed set of threads, each keeping one argon2 work area.
//!
//! An argon2id check with OWASP's parameters fills 19 MiB. Run on tokio's blocking pool,
//! each check of a flood landed on a fresh thread, and glibc kept every freed work area in
//! that thread's arena: 100 concurrent wrong logins grew the process by 400–650 MiB even
//! with at most four checks at once. Here [`MAX_PASSWORD_CHECKS`](crate::panel::MAX_PASSWORD_CHECKS)
//! threads are started once and each reuses its own buffer
//! ([`Argon2::hash_password_into_with_memory`]), so the memory password checks can take is
//! bounded by `threads × the largest work area` (4 × 19 MiB with the hashes `jobwire admin`
//! writes), however many logins arrive.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use argon2::password_hash::phc::{Output, PasswordHash};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use tokio::sync::oneshot;

/// The largest argon2 memory cost a stored hash may ask for, in KiB (64 MiB). A hash that
/// asks for more (a tampered row) matches nothing rather than taking the memory.
pub const MAX_MEMORY_KIB: u32 = 64 * 1024;

struct Job {
    password: String,
    phc: String,
    reply: oneshot::Sender<bool>,
}

/// A fixed pool of password-checking threads. The threads end when the pool is dropped.
pub struct PasswordCheckers {
    jobs: SyncSender<Job>,
    threads: usize,
}

impl std::fmt::Debug for PasswordCheckers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordCheckers")
            .field("threads", &self.threads)
            .finish()
    }
}

/// Why a check could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// Every thread is busy and the queue is full.
    #[error("every password checker is busy")]
    Busy,
    /// The checker threads are gone (could not be started, or one panicked).
    #[error("the password checkers are not running")]
    Gone,
}

impl PasswordCheckers {
    /// Starts `threads` checker threads (at least one) with a queue as long as the pool.
    pub fn start(threads: usize) -> std::io::Result<Self> {
        let threads = threads.max(1);
        let (jobs, rx) = sync_channel::<Job>(threads);
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("jobwire-password-{n}"))
                .spawn(move || work(&rx))?;
        }
        Ok(Self { jobs, threads })
    }

    /// Whether `password` matches the PHC string `phc`; a malformed hash matches nothing.
    pub async fn check(&self, password: String, phc: String) -> Result<bool, CheckError> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            password,
            phc,
            reply,
        };
        match self.jobs.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(CheckError::Busy),
            Err(TrySendError::Disconnected(_)) => return Err(CheckError::Gone),
        }
        answer.await.map_err(|_| CheckError::Gone)
    }
}

fn work(rx: &Mutex<Receiver<Job>>) {
    let mut memory: Vec<Block> = Vec::new();
    loop {
        // The lock is held only while waiting for the next job, so one idle thread waits
        // at a time and the others queue behind it.
        let job = {
            let rx = rx.lock().unwrap_or_else(PoisonError::into_inner);
            rx.recv()
        };
        let Ok(job) = job else { return };
        let ok = verify_with_memory(job.password.as_bytes(), &job.phc, &mut memory);
        // The caller may have given up (its request ended); nothing to tell then.
        let _ = job.reply.send(ok);
    }
}

/// Whether `password` matches the PHC string `phc`, hashing in `memory` (grown to the
/// hash's memory cost if smaller, never shrunk). The outputs are compared in constant time.
pub fn verify_with_memory(password: &[u8], phc: &str, memory: &mut Vec<Block>) -> bool {
    let Ok(hash) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (&hash.salt, &hash.hash) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(hash.algorithm.as_str()) else {
        return false;
    };
    let version = match hash.version.map(Version::try_from).transpose() {
        Ok(v) => v.unwrap_or_default(),
        Err(_) => return false,
    };
    let Ok(params) = Params::try_from(&hash) else {
        return false;
    };
    if params.m_cost() > MAX_MEMORY_KIB {
        return false;
    }
    let blocks = params.block_count();
    if memory.len() < blocks {
        memory.resize(blocks, Block::default());
    }
    let Some(work_area) = memory.get_mut(..blocks) else {
        return false;
    };
    let argon2 = Argon2::new(algorithm, version, params);
    let mut out = vec![0u8; expected.len()];
    if argon2
        .hash_password_into_with_memory(password, salt, &mut out, work_area)
        .is_err()
    {
        return false;
    }
    // `Output`'s equality is constant-time.
    Output::new(&out).is_ok_and(|computed| &computed == expected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::hash_password;

    #[test]
    fn the_reused_work_area_gives_the_same_verdicts_as_argon2() {
        let hash = hash_password("correct horse battery").expect("hash");
        let mut memory = Vec::new();
        assert!(verify_with_memory(
            b"correct horse battery",
            &hash,
            &mut memory
        ));
        let grown = memory.len();
        assert_eq!(grown, 19 * 1024, "one block per KiB of the memory cost");
        assert!(!verify_with_memory(
            b"correct horse battery ",
            &hash,
            &mut memory
        ));
        assert!(verify_with_memory(
            b"correct horse battery",
            &hash,
            &mut memory
        ));
        assert_eq!(
            memory.len(),
            grown,
            "the work area is reused, not grown again"
        );
        assert!(!verify_with_memory(b"x", "not a hash", &mut memory));
        assert!(!verify_with_memory(b"x", "", &mut memory));
    }

    #[test]
    fn hashes_with_other_parameters_are_checked_with_their_own() {
        use argon2::password_hash::PasswordHasher;
        let mut memory = Vec::new();
        for (alg, m, t) in [
            (Algorithm::Argon2id, 8 * 1024, 1),
            (Algorithm::Argon2i, 4 * 1024, 3),
            (Algorithm::Argon2d, 32 * 1024, 1),
        ] {
            let params = Params::new(m, t, 1, None).expect("params");
            let phc = Argon2::new(alg, Version::V0x13, params)
                .hash_password(b"another password")
                .expect("hash")
                .to_string();
            assert!(
                verify_with_memory(b"another password", &phc, &mut memory),
                "{phc}"
            );
            assert!(
                !verify_with_memory(b"another passwort", &phc, &mut memory),
                "{phc}"
            );
        }
    }

    #[test]
    fn a_hash_asking_for_too_much_memory_matches_nothing() {
        let huge = "$argon2id$v=19$m=4194304,t=1,p=1$c29tZXNhbHRzb21lc2FsdA$2RCh1EBbcslAFjhOWiAGWgM2lGBXEa9Y/SsQhpZpUXE";
        let mut memory = Vec::new();
        assert!(!verify_with_memory(b"whatever", huge, &mut memory));
        assert!(memory.is_empty(), "nothing allocated for it");
    }

    #[tokio::test]
    async fn the_pool_answers_and_refuses_when_full() {
        let hash = hash_password("correct horse battery").expect("hash");
        let pool = PasswordCheckers::start(1).expect("start");
        assert_eq!(
            pool.check("correct horse battery".into(), hash.clone())
                .await,
            Ok(true)
        );
        assert_eq!(pool.check("wrong".into(), hash.clone()).await, Ok(false));
        // One thread, a queue of one: of many checks sent at once, some are refused.
        let pool = Arc::new(pool);
        let mut checks = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let (pool, hash) = (pool.clone(), hash.clone());
            checks.spawn(async move { pool.check("wrong".into(), hash).await });
        }
        let answers: Vec<_> = checks.join_all().await;
        assert!(answers.contains(&Err(CheckError::Busy)), "{answers:?}");
        assert!(answers.contains(&Ok(false)), "{answers:?}");
    }
}
