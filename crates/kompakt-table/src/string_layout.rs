//! How a read hands over string columns: as stored, with 64-bit offsets, or as views. A
//! reader option that page decoding applies as it decodes, so it sits apart from both.

use arrow_schema::{DataType, Schema, SchemaRef};
use std::sync::Arc;

/// How a read hands over the `Utf8` and `Binary` columns of a table (top-level ones; strings
/// inside lists, structs or dictionaries keep their stored type).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StringLayout {
    /// With the offsets they are stored with: 32-bit for `Utf8` and `Binary`.
    #[default]
    AsStored,
    /// As `LargeUtf8` and `LargeBinary` (64-bit offsets, widened as the pages decode): what
    /// pandas' Arrow-backed strings hold, so it takes the columns without a conversion pass.
    Large,
    /// As `Utf8View` and `BinaryView`: 16-byte views, short strings inline, long ones pointing
    /// into their page's data. Polars' own layout, so it takes the columns without copying
    /// every string; a dictionary page's rows point into its dictionary, which is not copied
    /// once per row either.
    View,
}

impl StringLayout {
    /// The type a stored column of type `dt` is handed over as, when it changes.
    pub fn read_type(self, dt: &DataType) -> Option<DataType> {
        match (self, dt) {
            (StringLayout::Large, DataType::Utf8) => Some(DataType::LargeUtf8),
            (StringLayout::Large, DataType::Binary) => Some(DataType::LargeBinary),
            (StringLayout::View, DataType::Utf8) => Some(DataType::Utf8View),
            (StringLayout::View, DataType::Binary) => Some(DataType::BinaryView),
            _ => None,
        }
    }

    /// `schema` with the types this read hands over.
    pub(crate) fn schema(self, schema: SchemaRef) -> SchemaRef {
        if !schema.fields().iter().any(|f| self.read_type(f.data_type()).is_some()) {
            return schema;
        }
        let fields: Vec<_> = schema
            .fields()
            .iter()
            .map(|f| match self.read_type(f.data_type()) {
                Some(dt) => Arc::new(f.as_ref().clone().with_data_type(dt)),
                None => f.clone(),
            })
            .collect();
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
    }
}
