//! Compiles the RabbitMQ test suites in when the environment names a broker
//! (`JOBWIRE_TEST_AMQP_URL`, as `.ci/run` sets it) or the `amqp-tests` feature is on: one
//! test command (`cargo test --workspace`) runs the in-process queue on a fresh machine and
//! both in CI, and never skips a test silently.
fn main() {
    println!("cargo::rerun-if-env-changed=JOBWIRE_TEST_AMQP_URL");
    println!("cargo::rustc-check-cfg=cfg(jobwire_amqp_tests)");
    if std::env::var_os("JOBWIRE_TEST_AMQP_URL").is_some() {
        println!("cargo::rustc-cfg=jobwire_amqp_tests");
    }
}
