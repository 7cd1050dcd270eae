//! A list page decoded one item at a time: each item is handed to `take`
//! (which trims it, or drops it) as soon as it is decoded, so a page of
//! 500 whole Pods, managedFields and all, is never held decoded at once;
//! only the page's bytes and the trimmed items are.

use std::fmt;
use std::marker::PhantomData;

use crate::times::Lenient;
use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Decodes a list page (`{"metadata": {...}, "items": [...]}`), pushing
/// what `take` makes of each item onto `out` in order; returns the
/// continue token, when there is one.
pub fn decode_page<K, T>(
    bytes: &[u8],
    take: &(dyn Fn(K) -> Option<T> + Sync),
    out: &mut Vec<T>,
) -> Result<Option<String>, serde_json::Error>
where
    K: DeserializeOwned,
{
    let before = out.len();
    match decode_page_as::<K, T>(bytes, take, out) {
        Ok(token) => Ok(token),
        // A page that does not type may hold a valid time past jiff's
        // range (crate::times): decoded again, each item as a JSON value
        // saturated before it is typed. Only a failed page pays for it.
        Err(first) => {
            out.truncate(before);
            let lenient = |item: Lenient<K>| take(item.0);
            decode_page_as::<Lenient<K>, T>(bytes, &lenient, out).map_err(|_| {
                out.truncate(before);
                first
            })
        }
    }
}

fn decode_page_as<I, T>(
    bytes: &[u8],
    take: &(dyn Fn(I) -> Option<T> + Sync),
    out: &mut Vec<T>,
) -> Result<Option<String>, serde_json::Error>
where
    I: DeserializeOwned,
{
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let token = Page {
        take,
        out,
        item: PhantomData,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(token)
}

struct Page<'a, K, T> {
    take: &'a (dyn Fn(K) -> Option<T> + Sync),
    out: &'a mut Vec<T>,
    item: PhantomData<K>,
}

/// The one field of a list's metadata a reader follows.
#[derive(serde::Deserialize)]
struct ListMeta {
    #[serde(rename = "continue")]
    continue_: Option<String>,
}

impl<'de, K: DeserializeOwned, T> DeserializeSeed<'de> for Page<'_, K, T> {
    type Value = Option<String>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, K: DeserializeOwned, T> Visitor<'de> for Page<'_, K, T> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list with metadata and items")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut token = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "metadata" => {
                    let meta: Option<ListMeta> = map.next_value()?;
                    token = meta.and_then(|m| m.continue_).filter(|t| !t.is_empty());
                }
                "items" => map.next_value_seed(Items {
                    take: self.take,
                    out: &mut *self.out,
                    item: PhantomData,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(token)
    }
}

/// The items array (or `null`, as an empty list may be written).
struct Items<'a, 'b, K, T> {
    take: &'a (dyn Fn(K) -> Option<T> + Sync),
    out: &'b mut Vec<T>,
    item: PhantomData<K>,
}

impl<'de, K: DeserializeOwned, T> DeserializeSeed<'de> for Items<'_, '_, K, T> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, K: DeserializeOwned, T> Visitor<'de> for Items<'_, '_, K, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of objects")
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<K>()? {
            self.out.extend((self.take)(item));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    fn page(items: serde_json::Value, token: Option<&str>) -> Vec<u8> {
        let mut metadata = json!({"resourceVersion": "7"});
        if let Some(t) = token {
            metadata["continue"] = json!(t);
        }
        serde_json::to_vec(&json!({
            "kind": "PodList", "apiVersion": "v1", "metadata": metadata, "items": items,
        }))
        .unwrap()
    }

    fn pod(name: &str) -> serde_json::Value {
        json!({"metadata": {"name": name, "managedFields": [{"manager": "kubelet"}]},
               "spec": {"containers": [{"name": "c"}]}})
    }

    fn name_unless_dropped(p: Pod) -> Option<String> {
        let name = p.metadata.name.unwrap_or_default();
        (name != "drop").then_some(name)
    }

    #[test]
    fn each_item_is_taken_in_order_and_the_token_returned() {
        let bytes = page(json!([pod("a"), pod("drop"), pod("b")]), Some("next"));
        let mut out = Vec::new();
        let token = decode_page::<Pod, String>(&bytes, &name_unless_dropped, &mut out).unwrap();
        assert_eq!(out, ["a", "b"]);
        assert_eq!(token.as_deref(), Some("next"));
        // Items land after what an earlier page left.
        let token = decode_page::<Pod, String>(
            &page(json!([pod("c")]), Some("")),
            &name_unless_dropped,
            &mut out,
        )
        .unwrap();
        assert_eq!(out, ["a", "b", "c"]);
        assert_eq!(token, None, "an empty token ends the list");
    }

    #[test]
    fn a_null_or_missing_list_of_items_is_empty() {
        for bytes in [
            page(serde_json::Value::Null, None),
            br#"{"metadata": {}}"#.to_vec(),
        ] {
            let mut out: Vec<String> = Vec::new();
            assert_eq!(
                decode_page::<Pod, String>(&bytes, &name_unless_dropped, &mut out).unwrap(),
                None
            );
            assert!(out.is_empty());
        }
    }

    #[test]
    fn a_bad_item_or_trailing_bytes_fail_the_page() {
        let mut out: Vec<String> = Vec::new();
        let bad = page(json!([pod("a"), {"metadata": {"name": 3}}]), None);
        assert!(decode_page::<Pod, String>(&bad, &name_unless_dropped, &mut out).is_err());
        let mut trailing = page(json!([]), None);
        trailing.extend_from_slice(b" {}");
        assert!(decode_page::<Pod, String>(&trailing, &name_unless_dropped, &mut out).is_err());
    }
}
