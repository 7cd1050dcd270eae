//! Keeping secrets out of everything mdiag writes or prints. Secrets
//! themselves are never read; what remains is replaced here, by one
//! [`Redactor`], before a snapshot file is written and before any view
//! (the terminal, `-o json|yaml`, HTML, JUnit, the gate's reports, an MCP
//! answer) is shown an answer:
//!
//! - always: environment values whose names look like credentials, the
//!   values of credential-named probe headers (`Authorization`), the
//!   last-applied annotation (a copy of the whole object, env included), the
//!   values of any Secret a dump carried, ConfigMap `binaryData`, and
//!   whatever the user's `--redact` patterns match in any string or log;
//! - by default (off with `--no-default-redaction`): the shapes of
//!   credentials ([`RULES`]: JWTs, `Bearer`/`Basic` values, passwords in
//!   URLs and DSNs, signed URLs and webhooks, private key blocks, cloud,
//!   forge, payment and mail tokens, `password=`-like pairs and
//!   `--password VALUE`-like flags). In a snapshot file they are searched
//!   in logs, annotations, env values, container command and args, probe
//!   headers, every `message` and `note` (status, termination and waiting
//!   messages, Events), ConfigMap data and a custom resource's spec
//!   ([`walk`]); in an answer, in every string that came from outside
//!   ([`answer`]).
//!
//! Every replacement is the marker `<redacted:RULE>`; what names the value
//! (a key, a header, a URL's user) stays beside it, as in
//! `password=<redacted:credential>` or `Authorization: Bearer <redacted:bearer>`.
//! The file lists where, by which rule and how many times, never what.

mod answer;
mod redactor;
mod shapes;
mod walk;

pub use redactor::{PatternError, Redactor};
pub use shapes::{RULES, Rule, redact_shapes};
