//! Compiles the distributed end-to-end tests in when the environment names PostgreSQL,
//! RabbitMQ and Redis (as `.ci/run` does): `cargo test --workspace` then runs the embedded
//! suites on a fresh machine and the distributed ones too in CI, never skipping silently.
fn main() {
    const VARS: [&str; 3] = [
        "JOBWIRE_TEST_POSTGRES_URL",
        "JOBWIRE_TEST_AMQP_URL",
        "JOBWIRE_TEST_REDIS_URL",
    ];
    println!("cargo::rustc-check-cfg=cfg(jobwire_distributed_tests)");
    for var in VARS {
        println!("cargo::rerun-if-env-changed={var}");
    }
    if VARS.iter().all(|v| std::env::var_os(v).is_some()) {
        println!("cargo::rustc-cfg=jobwire_distributed_tests");
    }
    // `promtool check` of deploy/prometheus, when .ci/run names the tool.
    println!("cargo::rustc-check-cfg=cfg(jobwire_promtool_tests)");
    println!("cargo::rerun-if-env-changed=JOBWIRE_TEST_PROMTOOL");
    if std::env::var_os("JOBWIRE_TEST_PROMTOOL").is_some() {
        println!("cargo::rustc-cfg=jobwire_promtool_tests");
    }
}
