//! 100 wrong logins at once from 100 clients (issue 26): few password checks run at once,
//! the rest wait briefly or get 429, and the process's memory stays bounded. Alone in its
//! test binary so that the resident memory it measures is its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use axum::http::StatusCode;
use common::{login_from, retry_after};
use jobwire_admin::panel::MAX_PASSWORD_CHECKS;

/// The growth of resident memory a flood may cause: the checker threads' work areas
/// (4 × 19 MiB) and the requests' buffers, with room for the allocator. Before the checks
/// ran on threads that keep their work area, this flood grew the process by 380–650 MiB.
const MAX_GROWTH_MIB: u64 = 200;

/// This process's resident memory (VmRSS), in MiB.
fn resident_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line");
    kib / 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_from_many_clients_runs_few_password_checks_at_once_in_bounded_memory() {
    let bed = Arc::new(common::open(None, |s| s).await);
    let before = resident_mib();
    let mut statuses = Vec::new();
    // Two waves, so that a second flood cannot grow what the first one left.
    for wave in 0..2 {
        let tasks: Vec<_> = (0..100)
            .map(|i| {
                let bed = bed.clone();
                tokio::spawn(async move {
                    let client = format!("203.0.{wave}.{}", i + 1);
                    login_from(&bed, &client, "ops", "wrong password guess").await
                })
            })
            .collect();
        for t in tasks {
            let a = t.await.unwrap();
            match a.status {
                StatusCode::UNAUTHORIZED => {}
                // No turn to check the password came soon enough: try again shortly.
                StatusCode::TOO_MANY_REQUESTS => assert!(retry_after(&a) >= 1),
                other => panic!("unexpected {other}: {}", a.body),
            }
            statuses.push(a.status);
        }
    }
    let grown = resident_mib().saturating_sub(before);
    let busiest = bed.panel.busiest_password_checks();
    assert!(
        (1..=MAX_PASSWORD_CHECKS).contains(&busiest),
        "{busiest} password checks (19 MiB each) ran at once"
    );
    assert!(
        statuses.contains(&StatusCode::UNAUTHORIZED),
        "some passwords were checked"
    );
    assert!(
        grown < MAX_GROWTH_MIB,
        "200 wrong logins grew the process by {grown} MiB (from {before} MiB)"
    );
    // The right password still gets in once the flood is over.
    let owner = login_from(&bed, "192.0.2.10", "ops", common::PASSWORD).await;
    assert_eq!(owner.status, StatusCode::SEE_OTHER, "{}", owner.body);
}
