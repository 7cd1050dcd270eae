//! Human words as data: a [`Message`] is a stable id with named arguments,
//! made by analysis without choosing a language; renderers turn it into
//! English or Chinese with the templates of `messages.yaml`.
//!
//! A template fills `{name}` with the argument `name` (a nested message is
//! rendered in the same language), and `{name|one|other}` with `one` when
//! the argument is the number 1, else `other` (English plurals).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::Lang;

const MESSAGES_YAML: &str = include_str!("messages.yaml");
/// mdiag's own errors and notes on stderr, kept apart from the views' words.
const ERRORS_YAML: &str = include_str!("errors.yaml");

/// One message: an id of `messages.yaml` and its arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub id: &'static str,
    pub args: Args,
}

/// A message's arguments by name, in name order, serialized as a map.
/// A sorted list rather than a `BTreeMap`: most messages have one to three
/// arguments, and a map's first node takes about 600 bytes however few it
/// holds (9 MB of the diagnoses of a 10,000-Pod triage). A boxed slice,
/// not a `Vec`: exactly as long as its arguments, where a `Vec` grown by
/// one push holds room for four (a quarter of a 50,000-Pod triage's
/// arguments was that room).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args(Box<[(&'static str, Arg)]>);

impl Args {
    pub fn new() -> Args {
        Args(Box::default())
    }

    /// Sets the argument `name`; the value it had, if any.
    pub fn insert(&mut self, name: &'static str, value: Arg) -> Option<Arg> {
        match self.0.binary_search_by(|(k, _)| (*k).cmp(name)) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                let mut args = std::mem::take(&mut self.0).into_vec();
                args.reserve_exact(1);
                args.insert(i, (name, value));
                self.0 = args.into_boxed_slice();
                None
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arg> {
        let i = self.0.binary_search_by(|(k, _)| (*k).cmp(name)).ok()?;
        Some(&self.0[i].1)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// In name order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Arg)> {
        self.0.iter().map(|(k, v)| (*k, v))
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Arg> {
        self.0.iter_mut().map(|(_, v)| v)
    }
}

impl std::ops::Index<&str> for Args {
    type Output = Arg;
    fn index(&self, name: &str) -> &Arg {
        self.get(name)
            .unwrap_or_else(|| panic!("no argument {name:?}"))
    }
}

impl Serialize for Args {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

/// An argument: text from outside (names, the cluster's own words, shown
/// inert), a number, another message, or a view's own already-styled text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Arg {
    Text(String),
    /// Text a view made itself, colour included: shown as it is. Never
    /// holds text from outside unescaped ([`Arg::styled`]).
    Styled(String),
    Int(i64),
    Msg(Message),
    /// Items joined by the separator message `sep` (`sep.and`: ` and ` / ` 和 `).
    List {
        items: Vec<Arg>,
        #[serde(skip)]
        sep: &'static str,
    },
}

impl Arg {
    /// A view's own styled text (a bold word, a coloured tag), which
    /// [`Arg::Text`] would show escaped. What it wraps must already be
    /// inert: mdiag's own words, or outside text passed through
    /// [`crate::inert::inert`] before it was styled.
    pub fn styled(text: String) -> Self {
        Arg::Styled(text)
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Self {
        Arg::Text(s)
    }
}
impl From<&str> for Arg {
    fn from(s: &str) -> Self {
        Arg::Text(s.to_string())
    }
}
impl From<&String> for Arg {
    fn from(s: &String) -> Self {
        Arg::Text(s.clone())
    }
}
impl From<Message> for Arg {
    fn from(m: Message) -> Self {
        Arg::Msg(m)
    }
}
macro_rules! int_arg {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(n: $t) -> Self {
                Arg::Int(n as i64)
            }
        }
    )*};
}
int_arg!(i32, i64, u32, usize);

impl Arg {
    /// Items joined by the separator message `sep`.
    pub fn list(items: impl IntoIterator<Item = impl Into<Arg>>, sep: &'static str) -> Arg {
        Arg::List {
            items: items.into_iter().map(Into::into).collect(),
            sep,
        }
    }
}

impl Message {
    pub fn new(id: &'static str) -> Self {
        Message {
            id,
            args: Args::new(),
        }
    }

    /// Text from outside as a whole message (a server's or a parser's own
    /// words, which have no translation).
    pub fn quote(text: impl Into<String>) -> Self {
        Message::new("quote").arg("text", text.into())
    }

    /// Adds the argument `name`.
    pub fn arg(mut self, name: &'static str, value: impl Into<Arg>) -> Self {
        self.args.insert(name, value.into());
        self
    }

    /// The message in `lang`, for a person: text from outside in it shown
    /// inert ([`crate::inert::inert`]). An id without a template (a defect
    /// the tests rule out) is shown as the id with its arguments.
    pub fn render(&self, lang: Lang) -> String {
        self.text(lang, Shown::Inert)
    }

    /// The English text with outside text as it was: what JSON keeps as
    /// `detail` or `note`, and what the analysis builds evidence values
    /// from, so redaction sees the words as they were written (an escaped
    /// newline would glue two lines into one word).
    pub fn en(&self) -> String {
        self.text(Lang::En, Shown::Raw)
    }

    /// The text in `lang` with outside text as it was, for a line that is
    /// redacted and then made inert as a whole (an error on stderr).
    pub fn raw(&self, lang: Lang) -> String {
        self.text(lang, Shown::Raw)
    }

    fn text(&self, lang: Lang, shown: Shown) -> String {
        match messages().get(self.id) {
            Some(t) => fill(t.get(lang), &self.args, lang, shown),
            None => {
                let args: Vec<String> = self
                    .args
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.text(lang, shown)))
                    .collect();
                format!("{}({})", self.id, args.join(", "))
            }
        }
    }
}

/// How outside text is put into a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Inert,
    Raw,
}

impl Arg {
    /// For a person: text from outside shown inert, on one line.
    pub fn render(&self, lang: Lang) -> String {
        self.text(lang, Shown::Inert)
    }

    fn text(&self, lang: Lang, shown: Shown) -> String {
        match self {
            Arg::Text(t) if shown == Shown::Inert => crate::inert::inert(t).into_owned(),
            Arg::Text(t) | Arg::Styled(t) => t.clone(),
            Arg::Int(n) => n.to_string(),
            Arg::Msg(m) => m.text(lang, shown),
            Arg::List { items, sep } => {
                let sep = Message::new(sep).render(lang);
                items
                    .iter()
                    .map(|i| i.text(lang, shown))
                    .collect::<Vec<_>>()
                    .join(&sep)
            }
        }
    }
}

/// A message's templates in both languages, kept exactly (leading and
/// trailing spaces are part of a fragment such as `" ({reason})"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Template {
    pub en: String,
    pub zh: String,
}

impl Template {
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }
}

/// Every message template, by id.
pub fn messages() -> &'static BTreeMap<String, Template> {
    static MESSAGES: OnceLock<BTreeMap<String, Template>> = OnceLock::new();
    MESSAGES.get_or_init(|| {
        let mut all: BTreeMap<String, Template> =
            serde_saphyr::from_str(MESSAGES_YAML).expect("the embedded messages.yaml is valid");
        let errors: BTreeMap<String, Template> =
            serde_saphyr::from_str(ERRORS_YAML).expect("the embedded errors.yaml is valid");
        all.extend(errors);
        all
    })
}

/// A template with its `{name}` and `{name|one|other}` filled from `args`.
/// A brace that opens no known form stays as it is.
fn fill(template: &str, args: &Args, lang: Lang, shown: Shown) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(pos) = rest.find('{') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos + 1..];
        let Some(end) = tail.find('}') else {
            out.push('{');
            rest = tail;
            continue;
        };
        let inner = &tail[..end];
        let mut parts = inner.split('|');
        let name = parts.next().unwrap_or("");
        let forms: Vec<&str> = parts.collect();
        match args.get(name) {
            Some(value) if forms.len() == 2 => {
                let one = matches!(value, Arg::Int(1));
                out.push_str(if one { forms[0] } else { forms[1] });
            }
            Some(value) if forms.is_empty() => out.push_str(&value.text(lang, shown)),
            _ => {
                out.push('{');
                out.push_str(inner);
                out.push('}');
            }
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
/// The argument names a template fills in (`{name}`; not the plural
/// choices `{name|..|..}`, which only English has).
pub fn placeholders(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(pos) = rest.find('{') {
        let tail = &rest[pos + 1..];
        let Some(end) = tail.find('}') else { break };
        let inner = &tail[..end];
        let name = inner.split('|').next().unwrap_or("");
        // A plural choice (`{n|one|other}`) need not be in every language.
        if !inner.contains('|')
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        {
            out.push(name.to_string());
        }
        rest = &tail[end + 1..];
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_has_both_languages_with_the_same_arguments() {
        for (id, t) in messages() {
            assert_eq!(
                placeholders(&t.en),
                placeholders(&t.zh),
                "{id}: en and zh use different arguments"
            );
            if !t.en.trim().is_empty() {
                assert!(!t.zh.trim().is_empty(), "{id} has no Chinese text");
            }
        }
    }

    #[test]
    fn no_id_is_in_both_files() {
        let views: BTreeMap<String, Template> = serde_saphyr::from_str(MESSAGES_YAML).unwrap();
        let errors: BTreeMap<String, Template> = serde_saphyr::from_str(ERRORS_YAML).unwrap();
        let both: Vec<&String> = errors.keys().filter(|id| views.contains_key(*id)).collect();
        assert!(both.is_empty(), "in both files: {both:?}");
        assert!(errors.keys().all(|id| id.starts_with("error.")
            || id.starts_with("usage.")
            || id.starts_with("stderr.")));
    }

    #[test]
    fn arguments_fill_and_plurals_choose() {
        let m = Message::new("test.restarts").arg("n", 1);
        assert_eq!(
            fill("{n} {n|restart|restarts}", &m.args, Lang::En, Shown::Inert),
            "1 restart"
        );
        let m = Message::new("test.restarts").arg("n", 3);
        assert_eq!(
            fill("{n} {n|restart|restarts}", &m.args, Lang::En, Shown::Inert),
            "3 restarts"
        );
        let nested = Message::new("x").arg("inner", m);
        assert_eq!(
            fill("[{inner}] {missing}", &nested.args, Lang::En, Shown::Inert),
            "[{inner}] {missing}".replace("{inner}", &nested.args["inner"].render(Lang::En))
        );
        assert_eq!(
            fill("{.status} {", &Args::new(), Lang::En, Shown::Inert),
            "{.status} {"
        );
    }

    /// Every id a `Message::new("...")` in the sources names has a template,
    /// so no view can print a bare id.
    #[test]
    fn every_message_id_in_the_sources_has_a_template() {
        // Every crate of the product: this one and its siblings under src/.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut missing = Vec::new();
        let mut stack = vec![root];
        let mut used = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, _) in text.match_indices("Message::new(\"") {
                    let start = i + "Message::new(\"".len();
                    let end = start + text[start..].find('"').unwrap();
                    let id = &text[start..end];
                    if id.starts_with("test.") || id == "x" || id == "..." {
                        continue;
                    }
                    used += 1;
                    if !messages().contains_key(id) {
                        missing.push(format!("{}: {id}", path.display()));
                    }
                }
            }
        }
        assert!(used > 0);
        assert!(missing.is_empty(), "ids without a template: {missing:#?}");
    }

    /// Ids chosen before they reach `Message::new` (`let id = if .. {
    /// "headline.still_ready" } ..`): every string literal shaped as an id
    /// whose prefix is a message family's must have a template too.
    #[test]
    fn every_id_shaped_literal_of_a_message_family_has_a_template() {
        let families: std::collections::BTreeSet<&str> = messages()
            .keys()
            .filter_map(|id| id.split_once('.').map(|(f, _)| f))
            .collect();
        let is_id = |s: &str| {
            s.split_once('.').is_some_and(|(family, rest)| {
                families.contains(family)
                    && !rest.is_empty()
                    && rest
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            })
        };
        // Every crate of the product: this one and its siblings under src/.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut missing = Vec::new();
        let mut seen = 0;
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for literal in text.split('"').skip(1).step_by(2) {
                    // A file beside the source (the page style html.rs includes)
                    // is named like an id of its family.
                    let sibling_file = path.with_file_name(literal).is_file();
                    if is_id(literal) && !literal.starts_with("test.") && !sibling_file {
                        seen += 1;
                        if !messages().contains_key(literal) {
                            missing.push(format!("{}: {literal}", path.display()));
                        }
                    }
                }
            }
        }
        assert!(seen > 100, "only {seen} ids found");
        assert!(missing.is_empty(), "ids without a template: {missing:#?}");
    }

    /// Arguments set in any order read, render and serialize as a map in
    /// name order would; setting one again replaces it.
    #[test]
    fn args_behave_as_a_map_in_name_order() {
        let m = Message::new("quote")
            .arg("n", 3)
            .arg("container", "server")
            .arg("n", 2)
            .arg("a", Message::quote("x"));
        let names: Vec<&str> = m.args.iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["a", "container", "n"]);
        assert_eq!(m.args["n"], Arg::Int(2));
        assert!(m.args.contains_key("container") && !m.args.contains_key("pod"));
        let map: BTreeMap<&str, &Arg> = m.args.iter().collect();
        assert_eq!(
            serde_json::to_string(&m.args).unwrap(),
            serde_json::to_string(&map).unwrap()
        );
        assert!(Args::new().is_empty());
    }
}
