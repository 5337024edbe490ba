//! The top-level sections of the configuration file that other crates own
//! (the daemon's `server:` and `decision_log:`): the library's parser skips
//! them (or keeps them, as values, for their owners), and still refuses every
//! key nobody owns, naming it and its line as serde's own
//! `deny_unknown_fields` does.
//!
//! serde's `flatten` cannot do this: it does not work with
//! `deny_unknown_fields`, and it buffers the sections, so their errors would
//! lose their lines.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, IgnoredAny, IntoDeserializer, MapAccess, Visitor,
};

/// Deserializes a struct from `inner`, skipping the top-level keys in
/// `others`. Everything else reaches the struct's own `Deserialize`.
pub(super) struct SkipOthers<'o, D> {
    pub(super) inner: D,
    pub(super) others: &'o [&'o str],
    /// Where `others` are kept, read as values rather than skipped, so that
    /// their owners need not parse the whole text again for them.
    pub(super) keep: Option<&'o mut serde_norway::Mapping>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for SkipOthers<'_, D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = SkipVisitor {
            visitor,
            own: fields,
            others: self.others,
            keep: self.keep,
        };
        self.inner.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

struct SkipVisitor<'o, V> {
    visitor: V,
    own: &'static [&'static str],
    others: &'o [&'o str],
    keep: Option<&'o mut serde_norway::Mapping>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for SkipVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(SkipMap {
            map,
            own: self.own,
            others: self.others,
            keep: self.keep,
        })
    }
}

struct SkipMap<'o, A> {
    map: A,
    own: &'static [&'static str],
    others: &'o [&'o str],
    keep: Option<&'o mut serde_norway::Mapping>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SkipMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut seed = Some(seed);
        loop {
            let key = KeySeed {
                seed: &mut seed,
                own: self.own,
                others: self.others,
            };
            match self.map.next_key_seed(key)? {
                None => return Ok(None),
                Some(Key::Own(value)) => return Ok(Some(value)),
                Some(Key::Other(key)) => match &mut self.keep {
                    Some(kept) => {
                        let value = self.map.next_value()?;
                        kept.insert(key.into(), value);
                    }
                    None => {
                        self.map.next_value::<IgnoredAny>()?;
                    }
                },
            }
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A top-level key: the struct's (deserialized by its own seed) or another
/// crate's (skipped).
enum Key<'o, V> {
    Own(V),
    Other(&'o str),
}

/// Reads a top-level key inside the parser's own key, so that an unknown
/// key's error has the key's path and line, as serde's own has.
struct KeySeed<'s, 'o, K> {
    seed: &'s mut Option<K>,
    own: &'static [&'static str],
    others: &'o [&'o str],
}

impl<'de, 'o, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, 'o, K> {
    type Value = Key<'o, K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'o, K: DeserializeSeed<'de>> Visitor<'de> for KeySeed<'_, 'o, K> {
    type Value = Key<'o, K::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        if let Some(other) = self.others.iter().find(|other| **other == key) {
            return Ok(Key::Other(other));
        }
        if !self.own.contains(&key) {
            // serde's own message, listing every key the file may have.
            let expected: Vec<String> = self
                .own
                .iter()
                .chain(self.others)
                .map(|name| format!("`{name}`"))
                .collect();
            return Err(E::custom(format_args!(
                "unknown field `{key}`, expected one of {}",
                expected.join(", ")
            )));
        }
        let seed = self.seed.take().expect("a key is read once per seed");
        let key: de::value::StrDeserializer<'_, E> = key.into_deserializer();
        seed.deserialize(key).map(Key::Own)
    }
}
