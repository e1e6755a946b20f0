//! `jobwire login`: signs a Telegram user account in once from the terminal (phone, code,
//! 2FA password) and keeps its session file.

use std::io::{BufRead, Write};

use anyhow::Context;
use jobwire_mtproto::{AccountConfig, LoginPrompts, SessionStatus};

use super::MtprotoSettings;
use crate::config::Environment;

/// Where the answers come from: lines typed at the terminal (or piped in).
trait Answers: Send {
    /// One answer, shown while typed.
    fn line(&mut self) -> std::io::Result<String>;
    /// One answer that a terminal does not show while it is typed.
    fn hidden_line(&mut self) -> std::io::Result<String>;
}

/// Standard input. On a terminal, [`Answers::hidden_line`] turns echo off while the line is
/// typed; from a pipe or file (scripts, tests) it reads a plain line.
#[derive(Debug, Default)]
struct StdinAnswers;

impl Answers for StdinAnswers {
    fn line(&mut self) -> std::io::Result<String> {
        read_answer(&mut std::io::stdin().lock())
    }

    fn hidden_line(&mut self) -> std::io::Result<String> {
        let stdin = std::io::stdin();
        read_hidden(&mut stdin.lock(), &stdin)
    }
}

/// One line from `input`, without its line ending; the end of input is an error.
fn read_answer(input: &mut impl BufRead) -> std::io::Result<String> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "no answer (standard input is closed)",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// One line from `input`, whose file descriptor is `fd`. When `fd` is a terminal, echo is
/// off while the line is typed (the Enter still moves to the next line; anything typed
/// before the prompt is discarded, as `getpass` does) and is restored afterwards, also on
/// errors. Otherwise (a pipe, a file) the line is read as it comes, without touching any
/// terminal. A Ctrl-C still ends the process at once, which can leave the terminal without
/// echo (`stty echo` brings it back).
#[cfg(unix)]
pub(crate) fn read_hidden(
    input: &mut impl BufRead,
    fd: impl std::os::fd::AsFd,
) -> std::io::Result<String> {
    use rustix::termios::{LocalModes, OptionalActions, isatty, tcgetattr, tcsetattr};

    /// Puts the terminal's settings back when dropped.
    struct Restore<F: std::os::fd::AsFd>(F, rustix::termios::Termios);
    impl<F: std::os::fd::AsFd> Drop for Restore<F> {
        fn drop(&mut self) {
            let _ = tcsetattr(&self.0, OptionalActions::Now, &self.1);
        }
    }

    if !isatty(&fd) {
        return read_answer(input);
    }
    let original = tcgetattr(&fd)?;
    let mut quiet = original.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    quiet.local_modes.insert(LocalModes::ECHONL);
    tcsetattr(&fd, OptionalActions::Flush, &quiet)?;
    let _restore = Restore(fd, original);
    read_answer(input)
}

/// Elsewhere there is no portable way to hide input: read the line as it comes.
#[cfg(not(unix))]
pub(crate) fn read_hidden<F>(input: &mut impl BufRead, _fd: F) -> std::io::Result<String> {
    read_answer(input)
}

/// Asks on the terminal: questions and notices go to `out` (stderr), answers come from
/// `answers` (stdin). The 2FA password is read without echo.
struct TerminalPrompts<A, W> {
    answers: A,
    out: W,
}

impl<A, W> std::fmt::Debug for TerminalPrompts<A, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalPrompts").finish_non_exhaustive()
    }
}

impl<A: Answers, W: Write + Send> TerminalPrompts<A, W> {
    fn ask(&mut self, question: &str, hidden: bool) -> std::io::Result<String> {
        write!(self.out, "{question}")?;
        self.out.flush()?;
        if hidden {
            self.answers.hidden_line()
        } else {
            self.answers.line()
        }
    }
}

impl<A: Answers, W: Write + Send> LoginPrompts for TerminalPrompts<A, W> {
    fn phone(&mut self) -> std::io::Result<String> {
        self.ask(
            "Phone number of the account, international format (e.g. +491701234567): ",
            false,
        )
    }

    fn code(&mut self) -> std::io::Result<String> {
        self.ask("Login code (sent to your Telegram app, or by SMS): ", false)
    }

    fn password(&mut self, hint: Option<&str>) -> std::io::Result<String> {
        let hint = match hint {
            Some(h) if !h.is_empty() => format!(" (hint: {h})"),
            _ => String::new(),
        };
        self.ask(
            &format!("Two-step verification password{hint}, not shown while typed: "),
            true,
        )
    }

    fn notice(&mut self, message: &str) {
        let _ = writeln!(self.out, "{message}");
    }
}

/// Who a session is logged in as: username (when it has one), name and user id.
pub(super) fn describe(status: &SessionStatus) -> String {
    match &status.username {
        Some(u) => format!("{u} ({}, id {})", status.name, status.user_id),
        None => format!("{} (id {})", status.name, status.user_id),
    }
}

/// Signs `config`'s account in from the terminal (phone, code, 2FA password) and keeps the
/// session file; an account already logged in is left as is. Prints who it is logged in as.
pub async fn login(config: &AccountConfig) -> anyhow::Result<()> {
    println!(
        "account {}: session {}",
        config.id,
        config.session_path.display()
    );
    let mut prompts = TerminalPrompts {
        answers: StdinAnswers,
        out: std::io::stderr(),
    };
    let status = jobwire_mtproto::login(config, &mut prompts)
        .await
        .with_context(|| format!("account {}", config.id))?;
    if status.already_logged_in {
        println!(
            "account {}: already logged in as {}",
            config.id,
            describe(&status)
        );
    } else {
        println!(
            "account {}: logged in as {}; session saved to {}",
            config.id,
            describe(&status),
            config.session_path.display()
        );
    }
    Ok(())
}

/// `jobwire login [--account ID]`: logs in the named account, or every configured account
/// in turn.
pub async fn login_command(
    section: Option<&MtprotoSettings>,
    account: Option<&str>,
    env: &dyn Environment,
) -> anyhow::Result<()> {
    let section = section.context(
        "[mtproto]: no Telegram account is configured (add [[mtproto.accounts]] with id and api_id)",
    )?;
    let configs = section.account_configs(env)?;
    let chosen: Vec<&AccountConfig> = match account {
        Some(id) => {
            let c = configs.iter().find(|c| c.id == id).with_context(|| {
                let ids: Vec<&str> = configs.iter().map(|c| c.id.as_str()).collect();
                format!(
                    "--account: no account {id:?} in [[mtproto.accounts]] (configured: {})",
                    ids.join(", ")
                )
            })?;
            vec![c]
        }
        None => configs.iter().collect(),
    };
    for c in chosen {
        login(c).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What a terminal showed.
    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);

    impl Screen {
        fn text(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
        }
    }

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A person typing at a terminal, which shows what is typed unless echo is off.
    struct Typist {
        typed: VecDeque<&'static str>,
        screen: Screen,
    }

    impl Answers for Typist {
        fn line(&mut self) -> std::io::Result<String> {
            let line = self.typed.pop_front().unwrap();
            writeln!(self.screen, "{line}")?;
            Ok(line.to_string())
        }
        fn hidden_line(&mut self) -> std::io::Result<String> {
            let line = self.typed.pop_front().unwrap();
            writeln!(self.screen)?;
            Ok(line.to_string())
        }
    }

    #[test]
    fn the_password_is_never_shown_on_the_terminal() {
        let screen = Screen::default();
        let mut prompts = TerminalPrompts {
            answers: Typist {
                typed: VecDeque::from(["+491701234567", "12345", "s3cret-pw"]),
                screen: screen.clone(),
            },
            out: screen.clone(),
        };
        assert_eq!(prompts.phone().unwrap(), "+491701234567");
        assert_eq!(prompts.code().unwrap(), "12345");
        assert_eq!(prompts.password(Some("my cat")).unwrap(), "s3cret-pw");
        let shown = screen.text();
        assert!(
            shown.contains("+491701234567"),
            "typed answers are echoed: {shown}"
        );
        assert!(shown.contains("hint: my cat"), "{shown}");
        assert!(!shown.contains("s3cret"), "the password was shown: {shown}");
    }

    #[test]
    fn a_piped_password_is_read_as_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers");
        std::fs::write(&path, "s3cret-pw\r\nnext\n").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let mut input = std::io::BufReader::new(file.try_clone().unwrap());
        assert_eq!(read_hidden(&mut input, &file).unwrap(), "s3cret-pw");
        assert_eq!(read_answer(&mut input).unwrap(), "next");
        let e = read_hidden(&mut input, &file).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
    }

    #[cfg(unix)]
    #[test]
    fn a_terminal_does_not_echo_the_password_and_echoes_again_after() {
        use std::io::Read;
        use std::time::{Duration, Instant};

        use rustix::fs::{Mode, OFlags};
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        use rustix::termios::{LocalModes, tcgetattr};

        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let tty = std::fs::File::from(
            rustix::fs::open(
                name.as_c_str(),
                OFlags::RDWR | OFlags::NOCTTY,
                Mode::empty(),
            )
            .unwrap(),
        );
        let echo_on = |tty: &std::fs::File| {
            tcgetattr(tty)
                .unwrap()
                .local_modes
                .contains(LocalModes::ECHO)
        };
        assert!(echo_on(&tty));
        let reader_tty = tty.try_clone().unwrap();
        let reader = std::thread::spawn(move || {
            let mut input = std::io::BufReader::new(reader_tty.try_clone().unwrap());
            read_hidden(&mut input, &reader_tty)
        });
        // Type only once echo is off (give up waiting after a few seconds).
        let deadline = Instant::now() + Duration::from_secs(5);
        while echo_on(&tty) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut keyboard = std::fs::File::from(master);
        keyboard.write_all(b"s3cret-pw\n").unwrap();
        assert_eq!(reader.join().unwrap().unwrap(), "s3cret-pw");
        // What the terminal displayed meanwhile (the Enter shows as a line break).
        // Read on a clone: the terminal fails (EIO) once its last master handle is closed.
        let mut screen = keyboard.try_clone().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut shown = Vec::new();
            let mut buf = [0u8; 256];
            while !shown.contains(&b'\n') {
                match screen.read(&mut buf) {
                    Ok(n) if n > 0 => shown.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&shown).into_owned());
        });
        let shown = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(
            !shown.contains("s3cret"),
            "the password was echoed: {shown:?}"
        );
        assert!(echo_on(&tty), "echo is back on after the password");
        drop(keyboard);
    }
}
