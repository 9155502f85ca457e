//! The bundled viz spec (`specs/viz.schema.json`, the DSS paper's Appendix A) written as
//! Rust types: serde for the JSON, schemars for the schema, dss for the shorthand.
//!
//! ```text
//! cargo run -p dss-compiler --example viz_types
//! ```
//!
//! Prints the readable grammar of the derived schema, then Appendix A's visualization as
//! shorthand, and checks that it expands back to the same Rust value.

// The enum variants carry no doc comments on purpose: schemars would turn them into
// `description`s in the derived schema, changing the schema and its grammar.
#![allow(missing_docs)]

use dss_compiler::compile_type;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// High-level specification of a data visualization over a dataset: the fields to show,
/// optional filters, optional sorting and an optional chart type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Visualization Spec")]
pub struct Viz {
    /// Fields from the underlying dataset to use in the visualization; the minimal subset
    /// that satisfies the user request, with no two fields of the same name.
    #[schemars(length(min = 1))]
    pub fields: Vec<Field>,
    /// Filters to apply to the data; include only if the user request mentions filtering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<Filter>,
    /// How the data in the visualization is sorted; include only if the user request
    /// mentions sorting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sort: Vec<Sort>,
    /// Chart type; include only if the user request mentions a chart type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartType>,
}

/// A dataset field used in the visualization, with optional aggregation, encoding and
/// field type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Field {
    /// Name of the field, picked from the supplied dataset, e.g. "Sales".
    #[schemars(length(min = 1))]
    pub field_name: String,
    /// Aggregation or date part applied to the field, e.g. sum of sales or month of
    /// order date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<Aggregation>,
    /// Visual property the field values are mapped to, such as position, color, size or
    /// shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// Field role: dimension or measure; set or change it only if the user request
    /// mentions it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Field type: continuous or discrete; set or change it only if the user request
    /// mentions it.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub field_type: Option<FieldType>,
    /// Data type of the field values in the dataset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<DataType>,
}

/// Field role; combined with type it gives a continuous measure, a continuous dimension
/// or a discrete dimension.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Dimension,
    Measure,
}

/// Whether the field is continuous or discrete; measures are continuous, dimensions may
/// be either.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    Continuous,
    Discrete,
}

/// Data type of a field's values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataType {
    String,
    Number,
    Date,
    Datetime,
    Boolean,
}

/// How field values are mapped to visual properties such as color, size, shape and
/// position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    Color,
    Size,
    Shape,
    X,
    Y,
    Text,
}

/// Aggregation of a field's values (count, countDistinct, sum, average, max, min, median)
/// or date part of a date field (year to second).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Aggregation {
    Count,
    CountDistinct,
    Sum,
    Average,
    Max,
    Min,
    Median,
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
}

/// A filter on the data: categorical, relative-date, date-range or numeric-range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "filterType",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Filter {
    /// Categorical filter, e.g. "show only banking and healthcare".
    Categorical {
        /// Field whose values are filtered.
        #[schemars(length(min = 1))]
        field_name: String,
        /// True to exclude the listed values instead of keeping only them, e.g. "show
        /// Segment except banking and healthcare".
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        exclude: bool,
        /// Field values to keep (or exclude), picked from the supplied dataset, e.g.
        /// "Furniture".
        #[schemars(length(min = 1))]
        values: Vec<String>,
    },
    /// Relative date/time filter, e.g. "last year" or "previous two months".
    RelativeDate {
        /// Date field to filter.
        #[schemars(length(min = 1))]
        field_name: String,
        /// Number of units to look back, e.g. 2 for "last two years".
        #[schemars(range(min = 1))]
        duration: u32,
        /// Time unit of the duration.
        units: DateUnits,
    },
    /// Date range filter, e.g. "between April and July" or "since last year"; a missing
    /// start or end leaves that side of the range open.
    DateRange {
        /// Date field to filter.
        #[schemars(length(min = 1))]
        field_name: String,
        /// Lower bound of the range as an ISO 8601 date; omit it to mean "at most" the
        /// end date.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("format" = "date"))]
        start: Option<String>,
        /// Upper bound of the range as an ISO 8601 date; omit it to mean "at least" the
        /// start date.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("format" = "date"))]
        end: Option<String>,
    },
    /// Numeric range filter, e.g. "values between 11 and 17"; the field can be
    /// aggregated, e.g. sum of sales between 10 and 20.
    NumericRange {
        /// Numeric field to filter.
        #[schemars(length(min = 1))]
        field_name: String,
        /// Aggregation applied to the field before filtering, e.g. sum.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        aggregation: Option<Aggregation>,
        /// Lower bound of the range; omit it to mean "at most" the end value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start: Option<f64>,
        /// Upper bound of the range; omit it to mean "at least" the start value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        end: Option<f64>,
    },
}

/// Time unit of a relative date filter.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DateUnits {
    Days,
    Weeks,
    Months,
    Quarters,
    Years,
}

/// How to sort data in the visualization; a field can be sorted individually without
/// affecting other fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sort {
    /// Field to sort by.
    #[schemars(length(min = 1))]
    pub sort_by_field: String,
    /// Aggregation applied to the sort-by field, e.g. sort Region by sum of Sales.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<Aggregation>,
    /// Sort direction, ascending or descending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<SortDirection>,
    /// How many items to include, e.g. 5 for "top 5".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
    /// Field to sort; set it only if the user request mentions it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub field_name: Option<String>,
}

/// Sort direction: asc for ascending, desc for descending.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortDirection {
    Asc,
    Desc,
}

/// Type of chart used to render the visualization.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChartType {
    Text,
    Heatmap,
    Bar,
    Stackedbar,
    Line,
    Area,
    Gantt,
    Scatterplot,
    Histogram,
    Symbolmap,
    Filledmap,
    Treemap,
    Pie,
}

/// The DSS paper's Appendix A (`examples/viz/appendix-a.json`) as a Rust value.
pub fn appendix_a() -> Viz {
    let field = |name: &str| Field {
        field_name: name.into(),
        aggregation: None,
        encoding: None,
        role: None,
        field_type: None,
        data_type: None,
    };
    Viz {
        fields: vec![
            Field {
                aggregation: Some(Aggregation::Month),
                encoding: Some(Encoding::X),
                role: Some(Role::Dimension),
                field_type: Some(FieldType::Continuous),
                data_type: Some(DataType::Date),
                ..field("Order Date")
            },
            Field {
                aggregation: Some(Aggregation::Sum),
                role: Some(Role::Measure),
                field_type: Some(FieldType::Continuous),
                data_type: Some(DataType::Number),
                ..field("Sales")
            },
        ],
        filters: vec![
            Filter::Categorical {
                field_name: "Product Name".into(),
                exclude: false,
                values: vec!["Product A".into(), "Product B".into()],
            },
            Filter::Categorical {
                field_name: "Region".into(),
                exclude: false,
                values: vec!["South".into(), "West".into()],
            },
            Filter::RelativeDate {
                field_name: "Order Date".into(),
                duration: 2,
                units: DateUnits::Years,
            },
            Filter::NumericRange {
                field_name: "Sales".into(),
                aggregation: Some(Aggregation::Sum),
                start: Some(1000.0),
                end: Some(10000.0),
            },
        ],
        sort: vec![Sort {
            sort_by_field: "Sales".into(),
            aggregation: Some(Aggregation::Sum),
            direction: Some(SortDirection::Desc),
            limit: Some(5),
            field_name: Some("Region".into()),
        }],
        chart: None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = compile_type::<Viz>()?;
    println!("{}", spec.grammar_bnf());
    let viz = appendix_a();
    let shorthand = spec.compress_value(&viz)?;
    println!("{shorthand}");
    let back: Viz = spec.expand_into(&shorthand)?;
    assert_eq!(back, viz);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derived schema compiles; Appendix A compresses and expands back to the same
    /// Rust value, and an invalid value is rejected where it is invalid.
    #[test]
    fn derived_viz_schema_round_trips() {
        let spec = compile_type::<Viz>().expect("the derived schema compiles");
        let viz = appendix_a();
        let shorthand = spec.compress_value(&viz).expect("compresses");
        assert_eq!(spec.expand_into::<Viz>(&shorthand).expect("expands"), viz);
        // The same JSON as the bundled example (numbers aside: 1000.0 vs 1000).
        let bundled: serde_json::Value =
            serde_json::from_str(include_str!("../../examples/viz/appendix-a.json"))
                .expect("appendix-a.json");
        let typed: Viz = serde_json::from_value(bundled).expect("appendix-a.json is a Viz");
        assert_eq!(typed, viz);

        let mut bad = viz.clone();
        bad.sort[0].limit = Some(0);
        let e = spec.compress_value(&bad).unwrap_err();
        assert_eq!(
            (e.pointer(), e.keyword()),
            ("/sort/0/limit", Some("minimum"))
        );
    }
}
