//! Compiles the Redis half of the bot test suite (`tests/redis.rs`) in when the environment
//! names a server (`JOBWIRE_TEST_REDIS_URL`, e.g. `redis://127.0.0.1:6379`): without it that
//! test binary is empty instead of failing on a missing server. CI (`.ci/run`) sets it.
fn main() {
    println!("cargo::rerun-if-env-changed=JOBWIRE_TEST_REDIS_URL");
    println!("cargo::rustc-check-cfg=cfg(jobwire_redis_tests)");
    if std::env::var_os("JOBWIRE_TEST_REDIS_URL").is_some() {
        println!("cargo::rustc-cfg=jobwire_redis_tests");
    }
}
