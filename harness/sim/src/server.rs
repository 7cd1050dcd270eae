//! A node's kubelet server, reduced to what `kubectl logs` needs:
//! `GET /containerLogs/{namespace}/{pod}/{container}` over HTTPS with a
//! self-signed certificate (the apiserver does not verify kubelet serving
//! certificates unless it has `--kubelet-certificate-authority`), client
//! certificates ignored. While the node is stopped the port is closed.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use jiff::Timestamp;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::node::NodeCtx;
use super::state::LogLine;
use mdiag_harness_util::{fmt_nano, now};

/// A TLS acceptor with a fresh self-signed certificate for `node`.
pub fn tls_acceptor(node: &str) -> anyhow::Result<TlsAcceptor> {
    let names = vec![
        node.to_owned(),
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
    ];
    let ck = rcgen::generate_simple_self_signed(names)?;
    let cert = CertificateDer::from(ck.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(cfg)))
}

/// Serves until the task is aborted; closes the port while the node is
/// stopped and opens it again (same port) when it starts.
pub async fn serve(node: Arc<NodeCtx>, first: TcpListener, tls: TlsAcceptor) {
    let mut stopped = node.stopped.clone();
    let mut listener = Some(first);
    loop {
        if *stopped.borrow_and_update() {
            listener = None;
            if stopped.wait_for(|s| !*s).await.is_err() {
                return;
            }
        }
        let l = match listener.take() {
            Some(l) => l,
            None => match TcpListener::bind(("127.0.0.1", node.port)).await {
                Ok(l) => l,
                Err(e) => {
                    eprintln!(
                        "mdiag-sim: {}: reopening port {}: {e}",
                        node.name, node.port
                    );
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            },
        };
        loop {
            tokio::select! {
                acc = l.accept() => {
                    let Ok((tcp, _)) = acc else { continue };
                    let tls = tls.clone();
                    let node = node.clone();
                    tokio::spawn(async move {
                        let Ok(stream) = tls.accept(tcp).await else { return };
                        let svc = service_fn(move |req| {
                            let node = node.clone();
                            async move { Ok::<_, Infallible>(handle(&node, req)) }
                        });
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), svc)
                            .await;
                    });
                }
                r = stopped.changed() => {
                    if r.is_err() {
                        return;
                    }
                    if *stopped.borrow() {
                        break;
                    }
                }
            }
        }
    }
}

fn text(code: StatusCode, body: impl Into<String>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(code)
        .header("Content-Type", "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body.into())))
        .expect("response")
}

fn handle(node: &NodeCtx, req: Request<Incoming>) -> Response<Full<Bytes>> {
    if req.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "405 method not allowed\n");
    }
    let path = req.uri().path();
    if path == "/healthz" {
        return text(StatusCode::OK, "ok");
    }
    let Some(rest) = path.strip_prefix("/containerLogs/") else {
        return text(StatusCode::NOT_FOUND, "404 page not found\n");
    };
    let parts: Vec<String> = rest.split('/').map(percent_decode).collect();
    let [ns, pod, container] = parts.as_slice() else {
        return text(StatusCode::NOT_FOUND, "404 page not found\n");
    };
    let query = parse_query(req.uri().query().unwrap_or(""));
    container_logs(node, ns, pod, container, &query)
}

/// The kubelet's getContainerLogs.
fn container_logs(
    node: &NodeCtx,
    ns: &str,
    pod: &str,
    container: &str,
    q: &HashMap<String, String>,
) -> Response<Full<Bytes>> {
    if pod.is_empty() {
        return text(StatusCode::BAD_REQUEST, r#"{"message": "Missing podID."}"#);
    }
    if container.is_empty() {
        return text(
            StatusCode::BAD_REQUEST,
            r#"{"message": "Missing container name."}"#,
        );
    }
    let opts = match LogOptions::parse(q) {
        Ok(o) => o,
        Err(_) => {
            return text(
                StatusCode::BAD_REQUEST,
                r#"{"message": "Unable to decode query."}"#,
            );
        }
    };
    let state = node
        .pods
        .lock()
        .expect("pods")
        .get(&(ns.to_owned(), pod.to_owned()))
        .cloned();
    let Some(state) = state else {
        return text(
            StatusCode::NOT_FOUND,
            format!("pod \"{pod}\" does not exist"),
        );
    };
    let s = state.lock().expect("pod state");
    let Some(c) = s.container(container) else {
        return text(
            StatusCode::NOT_FOUND,
            format!("container \"{container}\" not found in pod \"{pod}\""),
        );
    };
    match c.logs(pod, opts.previous) {
        Ok(lines) => text(StatusCode::OK, render(lines, &opts, now())),
        Err(e) => text(StatusCode::BAD_REQUEST, e),
    }
}

#[derive(Debug, Default, PartialEq)]
pub struct LogOptions {
    pub previous: bool,
    pub timestamps: bool,
    pub follow: bool,
    pub tail_lines: Option<usize>,
    pub limit_bytes: Option<usize>,
    pub since_seconds: Option<i64>,
    pub since_time: Option<Timestamp>,
}

impl LogOptions {
    pub fn parse(q: &HashMap<String, String>) -> Result<Self, String> {
        let flag = |k: &str| -> Result<bool, String> {
            match q.get(k).map(String::as_str) {
                None | Some("") | Some("false") => Ok(false),
                Some("true") | Some("1") => Ok(true),
                Some(v) => Err(format!("{k}={v}")),
            }
        };
        let num = |k: &str| -> Result<Option<i64>, String> {
            match q.get(k) {
                None => Ok(None),
                Some(v) => v.parse().map(Some).map_err(|_| format!("{k}={v}")),
            }
        };
        let mut tail = num("tailLines")?;
        if let Some(t) = q.get("tail") {
            tail = if t == "all" {
                None
            } else {
                Some(t.parse().map_err(|_| format!("tail={t}"))?)
            };
        }
        Ok(LogOptions {
            previous: flag("previous")?,
            timestamps: flag("timestamps")?,
            follow: flag("follow")?,
            tail_lines: tail.map(|n| n.max(0) as usize),
            limit_bytes: num("limitBytes")?.map(|n| n.max(0) as usize),
            since_seconds: num("sinceSeconds")?,
            since_time: match q.get("sinceTime") {
                None => None,
                Some(t) => Some(t.parse().map_err(|_| format!("sinceTime={t}"))?),
            },
        })
    }
}

/// Applies since, then tail, then limitBytes, as the kubelet does.
pub fn render(lines: &[LogLine], o: &LogOptions, at: Timestamp) -> String {
    let since = o.since_time.or_else(|| {
        o.since_seconds
            .and_then(|s| at.checked_sub(jiff::SignedDuration::from_secs(s)).ok())
    });
    let mut sel: Vec<&LogLine> = lines
        .iter()
        .filter(|l| since.is_none_or(|s| l.ts >= s))
        .collect();
    if let Some(n) = o.tail_lines
        && sel.len() > n
    {
        sel.drain(..sel.len() - n);
    }
    let mut out = String::new();
    for l in sel {
        if o.timestamps {
            out.push_str(&fmt_nano(l.ts));
            out.push(' ');
        }
        out.push_str(&l.text);
        out.push('\n');
    }
    if let Some(n) = o.limit_bytes
        && out.len() > n
    {
        let mut cut = n;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

fn parse_query(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hi = (b[i + 1] as char).to_digit(16);
                let lo = (b[i + 2] as char).to_digit(16);
                match (hi, lo) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 3;
                    }
                    _ => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines() -> Vec<LogLine> {
        (0..5)
            .map(|i| LogLine {
                ts: Timestamp::from_second(1_800_000_000 + i).unwrap(),
                text: format!("line {i}"),
            })
            .collect()
    }

    #[test]
    fn query() {
        let q = parse_query(
            "previous=true&tailLines=2&sinceTime=2027-01-15T08%3A00%3A02Z&timestamps=true",
        );
        let o = LogOptions::parse(&q).unwrap();
        assert!(o.previous && o.timestamps);
        assert_eq!(o.tail_lines, Some(2));
        assert_eq!(o.since_time, Some("2027-01-15T08:00:02Z".parse().unwrap()));
        assert!(LogOptions::parse(&parse_query("tailLines=x")).is_err());
        assert_eq!(percent_decode("a%2Fb%"), "a/b%");
    }

    #[test]
    fn rendering() {
        let l = lines();
        let at = Timestamp::from_second(1_800_000_010).unwrap();
        let all = render(&l, &LogOptions::default(), at);
        assert_eq!(all, "line 0\nline 1\nline 2\nline 3\nline 4\n");
        let o = LogOptions {
            tail_lines: Some(2),
            ..Default::default()
        };
        assert_eq!(render(&l, &o, at), "line 3\nline 4\n");
        let o = LogOptions {
            since_seconds: Some(8),
            limit_bytes: Some(10),
            ..Default::default()
        };
        assert_eq!(render(&l, &o, at), "line 2\nlin");
        let o = LogOptions {
            timestamps: true,
            tail_lines: Some(1),
            ..Default::default()
        };
        assert!(render(&l, &o, at).ends_with("Z line 4\n"));
    }
}
