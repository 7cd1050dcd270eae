//! The values of a document as serde_json holds them, built by the decoder
//! itself so that a mapping naming a key twice is seen: the last value is
//! kept, as kubectl keeps it, and the read warns with the key and its line
//! (YAML; JSON gives the document).

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Where the key of a mapping is, when the syntax says (YAML's line).
pub(crate) struct Key {
    pub(crate) name: String,
    pub(crate) line: Option<u64>,
}

/// A key, with its line when `spanned` (YAML) asks for it.
pub(crate) struct KeySeed {
    pub(crate) spanned: bool,
}

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        let name = String::deserialize(deserializer)?;
        // The YAML reader notes each key's line as it gives the key.
        let line = if self.spanned {
            super::yaml::last_key_line()
        } else {
            None
        };
        Ok(Key { name, line })
    }
}

/// One value; `duplicate` hears of every key a mapping in it names twice.
#[derive(Clone, Copy)]
pub(crate) struct Tree {
    pub(crate) spanned: bool,
    pub(crate) duplicate: fn(Key),
}

impl<'de> DeserializeSeed<'de> for Tree {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tree {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let spanned = self.spanned;
        let mut merged = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed { spanned })? {
            let value = map.next_value_seed(self)?;
            // YAML's merge key (`<<: *defaults`), as kubectl reads it: the
            // keys of the mapping (or mappings, the first winning) that
            // this one does not give itself.
            if spanned && key.name == "<<" {
                match value {
                    Value::Object(from) => merged.push(from),
                    Value::Array(list) if list.iter().all(Value::is_object) => {
                        merged.extend(list.into_iter().filter_map(|v| match v {
                            Value::Object(from) => Some(from),
                            _ => None,
                        }));
                    }
                    value => {
                        out.insert(key.name, value);
                    }
                }
                continue;
            }
            if out.contains_key(&key.name) {
                (self.duplicate)(Key {
                    name: key.name.clone(),
                    line: key.line,
                });
            }
            out.insert(key.name, value);
        }
        for from in merged {
            for (name, value) in from {
                out.entry(name).or_insert(value);
            }
        }
        Ok(Value::Object(out))
    }
}
