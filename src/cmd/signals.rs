//! Ctrl-C and SIGTERM, for the commands that hold something worth
//! keeping: the gate writes its report with what it saw, a snapshot
//! writes nothing rather than half a file.

use std::future::Future;

use tokio::sync::watch;

/// Listens for SIGINT and SIGTERM from the moment it is made (their
/// default action, ending the process, is off from then on).
#[derive(Clone)]
pub struct Stop(watch::Receiver<Option<&'static str>>);

impl Stop {
    pub fn listen() -> Stop {
        let (tx, rx) = watch::channel(None);
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            // Registered here, before anything else runs.
            if let (Ok(mut int), Ok(mut term)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) {
                tokio::spawn(async move {
                    let name = tokio::select! {
                        _ = int.recv() => "SIGINT",
                        _ = term.recv() => "SIGTERM",
                    };
                    let _ = tx.send(Some(name));
                });
            }
        }
        #[cfg(not(unix))]
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = tx.send(Some("Ctrl-C"));
            }
        });
        Stop(rx)
    }

    /// The signal's name, once one came; never, where none can be watched.
    pub async fn signalled(&self) -> &'static str {
        let mut rx = self.0.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(name) => name.unwrap_or("a signal"),
            Err(_) => std::future::pending().await,
        }
    }

    /// `work`'s output, or the signal that came first (`work` is dropped).
    pub async fn unless<F: Future>(&self, work: F) -> Result<F::Output, &'static str> {
        tokio::select! {
            out = work => Ok(out),
            name = self.signalled() => Err(name),
        }
    }
}
