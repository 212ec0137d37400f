//! The OpenAPI schemas of the model's enums, built from each enum's own table (its `ALL` and its
//! names) so the contract spells no value again: an integer-coded enum publishes its codes as
//! `enum` and their names as `x-enum-varnames`, from which the console's generated types name
//! them (`npm run gen:api`). Only the API links it (the `openapi` feature).

use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// The codes with their names, as a description reads them: `0 DRAFT, 1 RUNNING`.
pub fn code_list(codes: &[(u8, &str)]) -> String {
    codes
        .iter()
        .map(|(code, name)| format!("{code} {name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An integer schema of `codes`, each `(code, NAME)` in the enum's order: the codes as its
/// `enum`, the names as its `x-enum-varnames`.
pub fn coded(description: String, codes: &[(u8, &str)]) -> RefOr<Schema> {
    let names: Vec<&str> = codes.iter().map(|(_, name)| *name).collect();
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .description(Some(description))
        .enum_values(Some(codes.iter().map(|(code, _)| *code)))
        // One extension only: utoipa keeps them in a HashMap, whose order would vary from run
        // to run and so make openapi.yaml differ from the code that generates it.
        .extensions(Some(
            ExtensionsBuilder::new()
                .add("x-enum-varnames", names)
                .build(),
        ))
        .into()
}

/// A string schema whose values are `names`, in order.
pub fn named(description: &str, names: impl IntoIterator<Item = &'static str>) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .enum_values(Some(names))
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_their_names_go_side_by_side() {
        let codes = [(0, "OFF"), (1, "ON")];
        assert_eq!(code_list(&codes), "0 OFF, 1 ON");
        let schema = serde_json::to_value(coded("A switch".into(), &codes)).unwrap();
        assert_eq!(
            schema,
            serde_json::json!({
                "type": "integer",
                "description": "A switch",
                "enum": [0, 1],
                "x-enum-varnames": ["OFF", "ON"],
            })
        );
    }
}
