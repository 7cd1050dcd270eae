//! Small helpers: time formatting as the apiserver stores it, random ids,
//! Go-style durations, error classification, a pid's start time,
//! creating a namespace; the annotation names ([`names`]) and the Event
//! recorder ([`events`]) that the simulator and the controller share.

pub mod events;
pub mod names;

use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::json;

/// The current time.
pub fn now() -> Timestamp {
    Timestamp::now()
}

/// `metav1.Time`: RFC 3339 with whole seconds, as the apiserver stores it.
pub fn fmt_time(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `metav1.MicroTime`: RFC 3339 with microseconds.
pub fn fmt_micro(ts: Timestamp) -> String {
    format!(
        "{}.{:06}Z",
        ts.strftime("%Y-%m-%dT%H:%M:%S"),
        ts.subsec_microsecond()
    )
}

/// RFC 3339 with nanoseconds, as the kubelet prefixes log lines with
/// `timestamps=true`.
pub fn fmt_nano(ts: Timestamp) -> String {
    format!(
        "{}.{:09}Z",
        ts.strftime("%Y-%m-%dT%H:%M:%S"),
        ts.subsec_nanosecond()
    )
}

/// Truncates to whole seconds (what a `metav1.Time` keeps).
pub fn trunc_secs(ts: Timestamp) -> Timestamp {
    Timestamp::from_second(ts.as_second()).unwrap_or(ts)
}

/// A random 64-bit number (std's RandomState keys are random per instance).
pub fn rand_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(now().as_nanosecond() as u128);
    h.finish()
}

/// `n` random lowercase hex digits.
pub fn rand_hex(n: usize) -> String {
    let mut s = String::with_capacity(n + 16);
    while s.len() < n {
        s.push_str(&format!("{:016x}", rand_u64()));
    }
    s.truncate(n);
    s
}

/// A random version-4 UUID.
pub fn uuid4() -> String {
    let a = rand_u64();
    let b = rand_u64();
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    let a = (a & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// A stable hex string derived from `seed` (for machine ids and image
/// digests that must not change between runs).
pub fn stable_hex(seed: &str, n: usize) -> String {
    // FNV-1a, extended by re-hashing with a counter.
    let mut out = String::with_capacity(n + 16);
    let mut round: u64 = 0;
    while out.len() < n {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ round;
        for b in seed.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{h:016x}"));
        round += 1;
    }
    out.truncate(n);
    out
}

/// The name Kubernetes gives an Event about `object`: `<object>.<hex nanos>`.
pub fn event_name(object: &str, at: Timestamp) -> String {
    format!("{object}.{:x}", at.as_nanosecond())
}

/// Go's `time.Duration.String()` for whole seconds: `10s`, `1m20s`, `5m0s`.
pub fn go_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{}m{}s", s / 3600, (s % 3600) / 60, s % 60)
    } else if s >= 60 {
        format!("{}m{}s", s / 60, s % 60)
    } else if d.subsec_millis() != 0 && s == 0 {
        format!("{}ms", d.as_millis())
    } else if d.subsec_millis() != 0 {
        let n = format!("{:.3}", d.as_secs_f64());
        format!("{}s", n.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{s}s")
    }
}

/// Whether `e` is an API error with this HTTP code.
pub fn is_code(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}

pub fn is_not_found(e: &kube::Error) -> bool {
    is_code(e, 404)
}

pub fn is_conflict(e: &kube::Error) -> bool {
    is_code(e, 409)
}

/// Scales a duration, never below `min`.
pub fn scaled(d: Duration, scale: f64, min: Duration) -> Duration {
    let s = d.as_secs_f64() * scale;
    Duration::from_secs_f64(s.max(min.as_secs_f64()))
}

/// The process state letter and start time (in clock ticks after boot) of a
/// pid, from `/proc/<pid>/stat`.
pub fn proc_stat(pid: i32) -> Option<(char, u64)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself hold spaces or ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); starttime is field 22.
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// The start time of `pid` while it is alive (not a zombie).
pub fn start_time_if_alive(pid: i32) -> Option<u64> {
    match proc_stat(pid) {
        Some((state, start)) if state != 'Z' && state != 'X' => Some(start),
        _ => None,
    }
}

/// Creates a namespace (fine when it exists).
pub async fn ensure_namespace(client: &Client, ns: &str) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let obj: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}}))?;
    match api.create(&PostParams::default(), &obj).await {
        Ok(_) => Ok(()),
        Err(e) if is_conflict(&e) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(go_duration(Duration::from_secs(10)), "10s");
        assert_eq!(go_duration(Duration::from_secs(80)), "1m20s");
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_millis(812)), "812ms");
        assert_eq!(go_duration(Duration::from_millis(1250)), "1.25s");
    }

    #[test]
    fn times() {
        let ts: Timestamp = "2026-11-28T10:00:01.123456789Z".parse().unwrap();
        assert_eq!(fmt_time(ts), "2026-11-28T10:00:01Z");
        assert_eq!(fmt_micro(ts), "2026-11-28T10:00:01.123456Z");
        assert_eq!(fmt_nano(ts), "2026-11-28T10:00:01.123456789Z");
        assert_eq!(event_name("p", ts), format!("p.{:x}", ts.as_nanosecond()));
    }

    #[test]
    fn ids() {
        let u = uuid4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert_eq!(rand_hex(64).len(), 64);
        assert_eq!(stable_hex("x", 32), stable_hex("x", 32));
        assert_ne!(stable_hex("x", 32), stable_hex("y", 32));
    }
}
