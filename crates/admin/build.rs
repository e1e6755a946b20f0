//! Compiles the browser tests in when the environment names a chromedriver
//! (`JOBWIRE_TEST_CHROMEDRIVER`, as `.ci/run` sets it after installing Debian's chromium and
//! chromium-driver): one test command (`cargo test --workspace`) runs the HTTP tests on a
//! fresh machine and the browser tests too in CI, never skipping a test silently.
fn main() {
    println!("cargo::rerun-if-env-changed=JOBWIRE_TEST_CHROMEDRIVER");
    println!("cargo::rustc-check-cfg=cfg(jobwire_browser_tests)");
    if std::env::var_os("JOBWIRE_TEST_CHROMEDRIVER").is_some() {
        println!("cargo::rustc-cfg=jobwire_browser_tests");
    }
}
