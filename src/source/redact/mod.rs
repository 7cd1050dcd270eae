//! Keeping secrets out of snapshot files. Secrets themselves are never
//! read; what remains is replaced here before a file is written:
//!
//! - always: environment values whose names look like credentials, the
//!   last-applied annotation (a copy of the whole object, env included), the
//!   values of any Secret a dump carried, and whatever the user's `--redact`
//!   patterns match in any string or log;
//! - by default (off with `--no-default-redaction`): the shapes of
//!   credentials ([`RULES`]: JWTs, `Bearer`/`Basic` values, passwords in
//!   URLs, private key blocks, cloud and forge tokens, `password=`-like
//!   pairs) in logs, annotations, env values, container command and args,
//!   and ConfigMap data.
//!
//! Every replacement is the marker `<redacted:RULE>`; what names the value
//! (a key, a header, a URL's user) stays beside it, as in
//! `password=<redacted:credential>` or `Authorization: Bearer <redacted:bearer>`.
//! The file lists where, by which rule and how many times, never what.

mod redactor;
mod shapes;
mod walk;

pub use redactor::{PatternError, Redactor};
pub use shapes::{RULES, Rule, redact_shapes};
