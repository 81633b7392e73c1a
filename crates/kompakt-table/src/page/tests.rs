//! Tests of page encoding and decoding: which encoding the data chooses, round trips of whole
//! pages and of windows of rows, and hostile pages, which must be errors and never panics.

use super::decode::{byte_array, decode_page_into_within, decode_page_rows_within, decode_rows_within};
use super::encode::push_shuffled;
use super::*;
use crate::string_layout::StringLayout;
use arrow_array::{
    Array, BooleanArray, Float64Array, Int32Array, Int64Array, LargeStringArray, StringArray, UInt16Array, UInt64Array,
};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use kompakt::filter::shuffle;

fn round_trip(arr: &dyn Array) -> u8 {
    round_trip_page(arr).summary
}

fn round_trip_page(arr: &dyn Array) -> Encoded {
    round_trip_with(arr, Some(kompakt::Codec::Zstd { level: 2 }))
}

/// Encodes for pages that go through `codec` (`None`: stored raw), decodes, and checks.
fn round_trip_with(arr: &dyn Array, codec: Option<kompakt::Codec>) -> Encoded {
    let data = arr.to_data();
    let mut page = Vec::new();
    let summary = encode_page(arr.data_type(), std::slice::from_ref(&data), &mut page, codec).unwrap();
    if summary.summary & 0x7f == encoding::RUNS {
        assert_eq!(summary.layout, 2);
    }
    check_decodes(arr, &page);
    summary
}

/// Checks that `page` decodes to `arr`: whole, in windows of rows, in every string layout,
/// and that every truncation of it is an error.
fn check_decodes(arr: &dyn Array, page: &[u8]) {
    let back = decode_page(arr.data_type(), arr.len(), page).unwrap();
    assert_eq!(arrow_array::make_array(back).as_ref(), arr);
    let n = arr.len();
    for (a, b) in [
        (0, 0),
        (0, n / 2),
        (n / 3, n),
        (n / 2, n / 2 + 1),
        (1, n.saturating_sub(1)),
        (n, n),
    ] {
        let (a, b) = (a.min(n), b.min(n).max(a.min(n)));
        let part = decode_page_rows(arr.data_type(), n, page, a..b).unwrap();
        assert_eq!(
            arrow_array::make_array(part).as_ref(),
            arr.slice(a, b - a).as_ref(),
            "rows {a}..{b}"
        );
        for layout in [StringLayout::Large, StringLayout::View] {
            let got = decode_page_rows_as(arr.data_type(), layout, n, page, a..b).unwrap();
            got.validate_full().unwrap();
            let got = arrow_array::make_array(got);
            match read_as(arr, layout) {
                Some(want) => assert_eq!(got.as_ref(), want.slice(a, b - a).as_ref(), "{layout:?}, rows {a}..{b}"),
                None => assert_eq!(got.as_ref(), arr.slice(a, b - a).as_ref(), "rows {a}..{b}"),
            }
        }
    }
    // Every truncation is an error, never a panic.
    for cut in 0..page.len() {
        assert!(decode_page(arr.data_type(), arr.len(), &page[..cut]).is_err());
    }
}

/// A `Utf8` or `Binary` array as `layout` hands it over, built value by value; None for
/// other types.
fn read_as(arr: &dyn Array, layout: StringLayout) -> Option<arrow_array::ArrayRef> {
    use arrow_array::cast::AsArray;
    if layout == StringLayout::View {
        return match arr.data_type() {
            DataType::Utf8 => Some(std::sync::Arc::new(arrow_array::StringViewArray::from_iter(
                arr.as_string::<i32>().iter(),
            ))),
            DataType::Binary => Some(std::sync::Arc::new(arrow_array::BinaryViewArray::from_iter(
                arr.as_binary::<i32>().iter(),
            ))),
            _ => None,
        };
    }
    match arr.data_type() {
        DataType::Utf8 => Some(std::sync::Arc::new(LargeStringArray::from_iter(
            arr.as_string::<i32>().iter(),
        ))),
        DataType::Binary => Some(std::sync::Arc::new(arrow_array::LargeBinaryArray::from_iter(
            arr.as_binary::<i32>().iter(),
        ))),
        _ => None,
    }
}

#[test]
fn encodings_are_chosen_from_the_data() {
    let narrow = Int32Array::from_iter_values((0..1000).map(|i| 1 + i % 100));
    assert_eq!(round_trip(&narrow), encoding::FOR);
    let prices = Float64Array::from_iter_values((0..1000).map(|i| [1.5, 2.25, 99.99][i % 3]));
    assert_eq!(round_trip(&prices), encoding::NESTED_DICT);
    let steady = Int64Array::from_iter_values((0..1000).map(|i| i * 1_000_003 + i % 3));
    assert_eq!(round_trip(&steady), encoding::DELTA);
    let sorted = Int64Array::from_iter_values((0..1000i64).map(|i| (1 << 40) | (i * 1000 + (i * 7919) % 13)));
    assert_eq!(round_trip(&sorted), encoding::DELTA);
    let twenty_bits = Int32Array::from_iter_values((0..1000u64).map(|i| {
        let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 44) as i32
    }));
    assert_eq!(round_trip(&twenty_bits), encoding::BITPACK);
    let three_bytes = Int64Array::from_iter_values((0..1000).map(|i| -(i * 16_000_003 % 16_700_000)));
    assert_eq!(round_trip(&three_bytes), encoding::FOR);
    let full = UInt64Array::from_iter_values((0..1000u64).map(|i| {
        let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 3
    }));
    assert_eq!(round_trip(&full), encoding::BITPACK);
    let one = Int32Array::from(vec![5]);
    round_trip(&one);
    let random = Int64Array::from_iter_values((0..1000u64).map(|i| {
        let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) as i64
    }));
    assert_eq!(round_trip(&random), encoding::PLAIN);
    let negative = Int32Array::from_iter_values((0..1000).map(|i| -50 + i % 7));
    assert_eq!(round_trip(&negative), encoding::FOR);
    let extremes = Int64Array::from(vec![i64::MIN, i64::MAX, 0, -1]);
    round_trip(&extremes);
    let u16s = UInt16Array::from_iter_values((0..300).map(|i| i * 200));
    round_trip(&u16s);
    // Signed ranges across zero: codes are differences mod 2^(8W), not mod 2^64. (Pages
    // stored raw, so that the codec's trials do not choose bytes for these periodic values.)
    let round_trip = |arr: &dyn Array| round_trip_with(arr, None).summary;
    let across_zero = Int32Array::from_iter_values((0..5000).map(|i| (i * 7919) % 2000 - 1000));
    assert_eq!(round_trip(&across_zero), encoding::BITPACK);
    let small_across = Int32Array::from_iter_values((0..5000).map(|i| (i * 31) % 400 - 200));
    assert_eq!(round_trip(&small_across), encoding::BITPACK);
    let i16s = arrow_array::Int16Array::from_iter_values((0..5000).map(|i| ((i * 31) % 600 - 300) as i16));
    assert_eq!(round_trip(&i16s), encoding::BITPACK);
    let i8s = arrow_array::Int8Array::from_iter_values((0..5000).map(|i| ((i * 8) % 21 - 10) as i8));
    assert_eq!(round_trip(&i8s), encoding::BITPACK);
}

#[test]
fn codes_the_codec_could_not_shrink_are_bit_packed() {
    let mut x = 1u64;
    let mut uniform = |k: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % k
    };
    // Uniform in 1..100: 6.6 bits of entropy in 7-bit codes, nothing for zstd to add.
    let random: Vec<i32> = (0..16_384).map(|_| 1 + uniform(100) as i32).collect();
    assert_eq!(round_trip(&Int32Array::from(random.clone())), encoding::BITPACK);
    // The same range with skewed frequencies (about 2 bits of entropy): left to the codec.
    let skewed = Int32Array::from_iter_values((0..16_384).map(|_| {
        let u = uniform(1000);
        if u < 900 {
            (u % 4) as i32
        } else {
            (u % 100) as i32
        }
    }));
    assert_eq!(round_trip(&skewed), encoding::FOR);
    // Uniform codes, but repeated: LZ4 finds the repeats, so the codec keeps them.
    let repeated = Int32Array::from(random[..2048].repeat(8));
    assert_eq!(round_trip(&repeated), encoding::FOR);
    // One-byte integers: 7 bits of entropy in 7 bits are packed; 70 values (6.1 bits) are
    // left to the codec, whose entropy stage saves 12 % over packing.
    let i8s = arrow_array::Int8Array::from_iter_values((0..16_384).map(|_| uniform(128) as i8));
    assert_eq!(round_trip(&i8s), encoding::BITPACK);
    let keys = arrow_array::Int8Array::from_iter_values((0..16_384).map(|_| uniform(70) as i8));
    assert_eq!(round_trip(&keys), encoding::PLAIN);
}

#[test]
fn long_runs_become_runs() {
    // Sorted keys, 100 rows each: one run per key.
    let keys = Int64Array::from_iter_values((0..5000i64).map(|i| 1_000_000_007 * (i / 100)));
    let enc = round_trip_page(&keys);
    assert_eq!((enc.summary, enc.layout), (encoding::RUNS, 2));
    let prices = Float64Array::from_iter_values((0..4000).map(|i| [9.99, -0.0, 0.0, f64::NAN][i / 700 % 4]));
    assert_eq!(round_trip(&prices), encoding::RUNS);
    let constant = arrow_array::Int8Array::from_iter_values((0..100).map(|_| -3));
    assert_eq!(round_trip(&constant), encoding::RUNS);
    // Nulls inside runs take the value before them, so they do not break the runs.
    let gappy = Int32Array::from_iter((0..3000).map(|i| (i % 9 != 4).then_some(i / 100)));
    assert_eq!(round_trip(&gappy), encoding::RUNS | SUMMARY_NULLS);
    let leading_nulls = Int32Array::from_iter((0..400).map(|i| (i >= 30).then_some(7)));
    assert_eq!(round_trip(&leading_nulls), encoding::RUNS | SUMMARY_NULLS);
    // Integers need runs of 64 rows on average (shorter ones are smaller as deltas);
    // floats 16.
    let step = |run: i64| {
        Int64Array::from_iter_values((0..4096i64).map(move |i| (1 << 40) + (i / run) * 1_000_003 + (i / run) % 3))
    };
    assert_eq!(round_trip(&step(63)), encoding::DELTA);
    assert_eq!(round_trip(&step(64)), encoding::RUNS);
    let float_steps = |run: usize| Float64Array::from_iter_values((0..4096).map(move |i| (i / run) as f64 * 0.1));
    assert_eq!(round_trip(&float_steps(15)), encoding::DICT);
    assert_eq!(round_trip(&float_steps(16)), encoding::RUNS);
    // Runs of different lengths (10-bit lengths), windows across them.
    let ragged = Int32Array::from_iter_values((0..20_000).map(|i: i32| if i < 19_900 { i / 1000 } else { -i / 50 }));
    assert_eq!(round_trip(&ragged), encoding::RUNS);
    // Strings of one length: the lengths are a run, which the page summary does not show.
    let codes = StringArray::from_iter_values((0..1000).map(|i| format!("{:06}", i * 7919 % 1_000_000)));
    let enc = round_trip_page(&codes);
    assert_eq!((enc.summary, enc.layout), (encoding::PLAIN, 2));
    // Pages without runs stay readable by layout-1 readers.
    let plain = Int32Array::from_iter_values((0..1000).map(|i| 1 + i % 100));
    assert_eq!(round_trip_page(&plain).layout, 1);
}

#[test]
fn floats_with_hundreds_of_values_get_two_byte_codes() {
    // A random walk in steps of 0.01: about 600 distinct values in 4096 rows.
    let mut x = 100.0f64;
    let walk = Float64Array::from_iter_values((0..4096u64).map(|i| {
        x += [0.01, -0.01, 0.02, -0.02, 0.0][(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as usize % 5];
        (x * 100.0).round() / 100.0
    }));
    let enc = round_trip_page(&walk);
    assert_eq!((enc.summary, enc.layout), (encoding::DECIMAL, 3));
    // Not decimals: square roots of 400 values, in a nested dictionary (table layout 9).
    let roots = Float64Array::from_iter_values((0..4096u64).map(|i| ((i * 7919 % 400) as f64).sqrt()));
    let enc = round_trip_page(&roots);
    assert_eq!((enc.summary, enc.layout), (encoding::NESTED_DICT, 9));
    // Within layout 8, 2-byte codes (layout 2).
    let mut page = Vec::new();
    let enc = encode_page_within(&DataType::Float64, &[roots.to_data()], &mut page, 8).unwrap();
    assert_eq!((enc.summary, enc.layout), (encoding::DICT, 2));
    check_decodes(&roots, &page);
    let prices = arrow_array::Float32Array::from_iter(
        (0..4096).map(|i| (i % 9 != 0).then_some(((i * 7 % 400) as f32 / 3.0).sqrt())),
    );
    assert_eq!(round_trip(&prices), encoding::DICT | SUMMARY_NULLS);
    // Repeats at first, then distinct values: plain, found out before the page's end.
    let turning =
        Float64Array::from_iter_values((0..8192).map(|i| if i < 1500 { (i % 10) as f64 } else { (i as f64).sqrt() }));
    assert_eq!(round_trip(&turning), encoding::PLAIN);
    // Few repeats: plain, without hashing the whole page.
    let noise = Float64Array::from_iter_values(
        (0..4096u64).map(|i| f64::from_bits(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2)),
    );
    assert_eq!(
        round_trip_page(&noise),
        Encoded {
            summary: encoding::PLAIN,
            layout: 1
        }
    );
    // Up to 256 values keep one-byte codes, readable by layout-1 readers.
    let few = Float64Array::from_iter_values((0..4096).map(|i| (i % 200) as f64 * 0.5));
    assert_eq!(
        round_trip_page(&few),
        Encoded {
            summary: encoding::DICT,
            layout: 1
        }
    );
}

#[test]
fn hostile_dictionary_pages_are_errors() {
    // Int32, 4 rows, dictionary of `d` values (all 7), code width `k`, then `codes`.
    let page = |d: u32, k: u8, codes: &[u8]| {
        let mut p = vec![0u8, encoding::DICT];
        p.extend_from_slice(&d.to_le_bytes());
        let values: Vec<u8> = (0..d).flat_map(|_| 7i32.to_le_bytes()).collect();
        push_shuffled(4, &values, &mut p);
        p.push(k);
        p.extend_from_slice(codes);
        p
    };
    // Codes 0, 299, 1, 2 (byte-shuffled: low bytes, then high bytes).
    let wide = page(300, 2, &[0, 43, 1, 2, 0, 1, 0, 0]);
    assert!(decode_page(&DataType::Int32, 4, &wide).is_ok());
    for (why, bad) in [
        ("a code past the dictionary", page(300, 2, &[0, 44, 1, 2, 0, 1, 0, 0])),
        ("300 values with 1-byte codes", page(300, 1, &[0, 1, 2, 3])),
        ("3-byte codes", page(3, 3, &[0; 12])),
        ("too many values", page(65_537, 2, &[0; 8])),
        ("codes cut short", page(300, 2, &[0, 43, 1, 2, 0, 1, 0])),
        // Packed codes (width 0): the bit width, then the codes.
        ("9-bit packed codes", page(3, 0, &[9, 0, 0, 0, 0, 0])),
        ("a packed code past the dictionary", page(3, 0, &[2, 0b10_01_11_00])),
        ("300 values with packed codes", page(300, 0, &[8, 0, 1, 2, 3])),
        ("packed codes cut short", page(3, 0, &[4, 0x10])),
        ("no bit width", page(3, 0, &[])),
    ] {
        assert!(decode_page(&DataType::Int32, 4, &bad).is_err(), "{why}");
        assert!(decode_page_rows(&DataType::Int32, 4, &bad, 1..2).is_err(), "{why}");
    }
    // No bits at all for a dictionary of one value.
    let back = arrow_array::make_array(decode_page(&DataType::Int32, 4, &page(1, 0, &[0])).unwrap());
    assert_eq!(back.as_ref(), &Int32Array::from(vec![7; 4]));
    // Codes 0, 2, 1, 2 in 2 bits into the values 10, 20, 30, least significant bits first.
    let mut packed = vec![0u8, encoding::DICT, 3, 0, 0, 0];
    let values: Vec<u8> = [10i32, 20, 30].iter().flat_map(|v| v.to_le_bytes()).collect();
    push_shuffled(4, &values, &mut packed);
    packed.extend_from_slice(&[0, 2, 0b10_01_10_00]);
    let back = arrow_array::make_array(decode_page(&DataType::Int32, 4, &packed).unwrap());
    assert_eq!(back.as_ref(), &Int32Array::from(vec![10, 30, 20, 30]));
    let part = arrow_array::make_array(decode_page_rows(&DataType::Int32, 4, &packed, 1..3).unwrap());
    assert_eq!(part.as_ref(), &Int32Array::from(vec![30, 20]));
}

#[test]
fn hostile_nested_dictionary_pages_are_errors() {
    // Int32, 4 rows, a nested dictionary of `d` values (10, 20, ..., as the page of values
    // `values` holds them), code width `k`, then `codes`.
    let plain = |d: u32| {
        let mut v = vec![encoding::PLAIN];
        let bytes: Vec<u8> = (1..=d as i32).flat_map(|i| (10 * i).to_le_bytes()).collect();
        push_shuffled(4, &bytes, &mut v);
        v
    };
    let page = |d: u32, values: &[u8], k: u8, codes: &[u8]| {
        let mut p = vec![0u8, encoding::NESTED_DICT];
        p.extend_from_slice(&d.to_le_bytes());
        p.extend_from_slice(values);
        p.push(k);
        p.extend_from_slice(codes);
        p
    };
    // Codes 0, 2, 1, 2 in 2 bits, least significant bits first.
    let good = page(3, &plain(3), 0, &[2, 0b10_01_10_00]);
    let back = arrow_array::make_array(decode_page(&DataType::Int32, 4, &good).unwrap());
    assert_eq!(back.as_ref(), &Int32Array::from(vec![10, 30, 20, 30]));
    let part = arrow_array::make_array(decode_page_rows(&DataType::Int32, 4, &good, 1..3).unwrap());
    assert_eq!(part.as_ref(), &Int32Array::from(vec![30, 20]));
    // The values unshuffled, one-byte codes.
    let mut unshuffled = vec![encoding::UNSHUFFLED];
    unshuffled.extend((1..=3i32).flat_map(|i| (10 * i).to_le_bytes()));
    let back =
        arrow_array::make_array(decode_page(&DataType::Int32, 4, &page(3, &unshuffled, 1, &[2, 2, 0, 1])).unwrap());
    assert_eq!(back.as_ref(), &Int32Array::from(vec![30, 30, 10, 20]));
    // Values as a frame of reference: base 10, codes 0, 10, 20 in bytes.
    let mut framed = vec![encoding::FOR, 1];
    framed.extend_from_slice(&10i32.to_le_bytes());
    framed.extend_from_slice(&[0, 10, 20]);
    let back = arrow_array::make_array(decode_page(&DataType::Int32, 4, &page(3, &framed, 1, &[1, 0, 2, 1])).unwrap());
    assert_eq!(back.as_ref(), &Int32Array::from(vec![20, 10, 30, 20]));
    // A nested dictionary in a nested dictionary's values.
    let inner = page(3, &plain(3), 1, &[2, 1, 0]);
    let nested_twice = page(3, &inner[1..], 1, &[0, 1, 2, 0]);
    for (why, bad) in [
        ("no values", page(0, &plain(0), 1, &[0; 4])),
        ("more values than rows", page(5, &plain(5), 1, &[0, 1, 2, 3])),
        (
            "17-bit packed codes",
            page(3, &plain(3), 0, &[17, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        ),
        (
            "a packed code past the dictionary",
            page(3, &plain(3), 0, &[2, 0b10_01_11_00]),
        ),
        ("a byte code past the dictionary", page(3, &plain(3), 1, &[0, 3, 1, 2])),
        ("3-byte codes", page(3, &plain(3), 3, &[0; 12])),
        ("values cut short", page(3, &plain(3)[..10], 1, &[])),
        ("codes cut short", page(3, &plain(3), 0, &[2])),
        ("no code width", page(3, &plain(3), 1, &[0, 1, 2, 0])[..19].to_vec()),
        ("a dictionary inside its values", nested_twice),
    ] {
        assert!(decode_page(&DataType::Int32, 4, &bad).is_err(), "{why}");
        assert!(decode_page_rows(&DataType::Int32, 4, &bad, 1..2).is_err(), "{why}");
    }
    // Codes into the column's dictionary are a column's values, not a dictionary's: refused
    // where the same codes at the top of the page read (with the column's dictionary).
    let column = ColumnDict::new(&Int32Array::from(vec![5, 6, 7]).to_data()).unwrap();
    let codes = [&[encoding::PLAIN][..], &[0u8, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]].concat();
    let top = [&[0u8, encoding::COLUMN_DICT][..], &codes].concat();
    let with =
        |page: &[u8], n| decode_page_rows_with(&DataType::Int32, StringLayout::AsStored, n, page, 0..n, Some(&column));
    let back = arrow_array::make_array(with(&top, 3).unwrap());
    assert_eq!(back.as_ref(), &Int32Array::from(vec![5, 6, 7]));
    let inner = [&[encoding::COLUMN_DICT][..], &codes].concat();
    assert!(with(&page(3, &inner, 1, &[0, 1, 2, 0]), 4).is_err());
    // Nested dictionaries of 1-byte values do not exist.
    let int8 = [
        &[0u8, encoding::NESTED_DICT][..],
        &2u32.to_le_bytes(),
        &[encoding::PLAIN, 5, 6, 1, 0, 1, 1, 0],
    ]
    .concat();
    assert!(decode_page(&DataType::Int8, 4, &int8).is_err());
    // Two-byte codes (byte-shuffled) of 300 values, in 300 rows: backwards, and one past the
    // dictionary.
    let codes: Vec<u8> = (0..300u16).rev().flat_map(u16::to_le_bytes).collect();
    let mut shuffled = Vec::new();
    push_shuffled(2, &codes, &mut shuffled);
    let back =
        arrow_array::make_array(decode_page(&DataType::Int32, 300, &page(300, &plain(300), 2, &shuffled)).unwrap());
    assert_eq!(
        back.as_ref(),
        &Int32Array::from_iter_values((1..=300).rev().map(|i| 10 * i))
    );
    shuffled[0] = 44; // code 300
    assert!(decode_page(&DataType::Int32, 300, &page(300, &plain(300), 2, &shuffled)).is_err());
}

#[test]
fn mostly_distinct_integers_keep_a_dictionary_only_where_it_is_smaller() {
    let scrambled = |i: u64| (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // 300 rows of 250 ids of 64 random bits: a dictionary (its values, a byte a row) is
    // smaller than the ids themselves.
    let id = |k: u64| scrambled(k) ^ (scrambled(k) >> 29);
    let ids = UInt64Array::from_iter_values((0..300).map(|i| id(i * 7919 % 250)));
    let e = round_trip(&ids);
    assert!(matches!(e, encoding::DICT | encoding::NESTED_DICT), "{e}");
    // 300 rows of about 200 values in 12 bits: their codes are smaller than a dictionary.
    let narrow = Int32Array::from_iter_values((0..300).map(|i| (scrambled(i) >> 40) as i32 % 200 * 17));
    assert!(matches!(
        round_trip(&narrow),
        encoding::BITPACK | encoding::FOR | encoding::SCALED
    ));
}

#[test]
fn unshuffled_pages_read_whole_and_in_windows() {
    // A top-level page of values as they are (the writer stores a dictionary's values so).
    let values = Int64Array::from_iter_values((0..100i64).map(|i| i * i - 7));
    let raw: Vec<u8> = values.values().iter().flat_map(|v| v.to_le_bytes()).collect();
    let page = [&[0u8, encoding::UNSHUFFLED][..], &raw].concat();
    check_decodes(&values, &page);
    // Only for values of 2, 4 and 8 bytes.
    let bytes = [0u8, encoding::UNSHUFFLED, 1, 2, 3];
    assert!(decode_page(&DataType::Int8, 3, &bytes).is_err());
    assert!(decode_page(&DataType::Int64, 100, &page[..page.len() - 1]).is_err());
}

#[test]
fn nested_dictionaries_shrink_the_values_and_wide_codes() {
    let scrambled = |i: u64| (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    let encode = |arr: &dyn Array| {
        let mut page = Vec::new();
        let codec = Some(kompakt::Codec::Zstd { level: 3 });
        let enc = encode_page(arr.data_type(), &[arr.to_data()], &mut page, codec).unwrap();
        (enc, page)
    };
    let size_within = |arr: &dyn Array, layout: u16| {
        let mut page = Vec::new();
        encode_page_within(arr.data_type(), &[arr.to_data()], &mut page, layout).unwrap();
        page.len()
    };
    // 164 readings of two decimals (nlme's Milk): the values a decimal page of codes.
    let milk = Float64Array::from_iter_values((0..1337).map(|i| (250 + scrambled(i) % 164) as f64 / 100.0));
    let (enc, page) = encode(&milk);
    assert_eq!((enc.summary, enc.layout), (encoding::NESTED_DICT, 9));
    assert_eq!(page[1 + 1 + 4], encoding::DECIMAL);
    assert!(page.len() + 164 * 6 < size_within(&milk, 8), "{} bytes", page.len());
    check_decodes(&milk, &page);
    // 600 distinct values of 8 random bytes, codes skewed to a few: packed in 10 bits, not
    // two bytes.
    let values: Vec<f64> = (0..600u64)
        .map(|k| f64::from_bits(scrambled(k) << 20 | 0x3FF0 << 48))
        .collect();
    let skewed = Float64Array::from_iter_values((0..8000u64).map(|i| {
        let r = scrambled(i + 7) % 1_000_000;
        values[if r < 900_000 {
            (r % 40) as usize
        } else {
            (r % 600) as usize
        }]
    }));
    let (enc, page) = encode(&skewed);
    assert_eq!((enc.summary, enc.layout), (encoding::NESTED_DICT, 9));
    let d = u32::from_le_bytes(page[2..6].try_into().unwrap()) as usize;
    assert!((513..=600).contains(&d), "{d} values");
    let width_at = 6 + 1 + d * 8;
    assert_eq!(page[6], encoding::PLAIN);
    assert_eq!(&page[width_at..width_at + 2], &[encoding::DICT_PACKED_CODES, 10]);
    check_decodes(&skewed, &page);
    // Sevenths: their mantissas repeat a pattern of bytes, which unshuffled values keep.
    let sevenths = Float64Array::from_iter_values((0..4000u64).map(|i| (scrambled(i) % 200) as f64 / 7.0 + 3.0));
    let (enc, page) = encode(&sevenths);
    assert_eq!(
        (enc.summary, enc.layout, page[6]),
        (encoding::NESTED_DICT, 9, encoding::UNSHUFFLED)
    );
    check_decodes(&sevenths, &page);
}

#[test]
fn pages_kept_within_a_layout_use_no_dictionary_it_lacks() {
    // What a file's row-group statistics are encoded with: 300 minimums of a few values
    // (packed codes would need layout 8) and 2000 of 400 values (2-byte codes: layout 2).
    let scrambled = |i: u64| (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    let few = Float64Array::from_iter_values((0..300).map(|i| (scrambled(i) % 8) as f64 / 3.0));
    let many = Float64Array::from_iter_values((0..2000).map(|i| (scrambled(i) % 400) as f64 / 3.0));
    for (arr, within, free) in [(&few, 7, 8), (&many, 1, 2)] {
        let data = arr.to_data();
        for layout in [within, free] {
            let mut page = Vec::new();
            let enc = encode_page_within(&DataType::Float64, std::slice::from_ref(&data), &mut page, layout).unwrap();
            // Within the lower layout, a page without the dictionary; given its layout, with it.
            let fits = if layout == within {
                enc.layout <= within
            } else {
                enc.layout == free
            };
            assert!(
                fits,
                "{} values within layout {layout}: layout {}",
                arr.len(),
                enc.layout
            );
            check_decodes(arr, &page);
        }
    }
}

#[test]
fn dictionary_codes_are_bit_packed_where_the_codec_gains_nothing_from_bytes() {
    let scrambled = |i: u64| (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    // 16 grades, each as frequent: 4 bits a code, which a byte of code cannot beat.
    let grades = Float64Array::from_iter_values((0..3000).map(|i| (scrambled(i) % 16) as f64 / 3.0));
    let packed = Encoded {
        summary: encoding::DICT,
        layout: 8,
    };
    assert_eq!(round_trip_page(&grades), packed);
    // With nulls, and integers of a wide range (no frame of reference): 3 bits a code.
    let amounts = Int64Array::from_iter(
        (0..3000).map(|i| (i % 9 != 4).then_some([7, -1_000_000_007, 1 << 40, 5][(scrambled(i) % 4) as usize] * 3 + 1)),
    );
    // (9: the four values are a nested page, bit-packed in 42 bits, smaller than 8 bytes each.)
    assert_eq!(round_trip_page(&amounts).layout, 9);
    // Pages under 256 rows keep byte codes.
    let short = Float64Array::from_iter_values((0..255).map(|i| (scrambled(i) % 16) as f64 / 3.0));
    assert_eq!(round_trip_page(&short).layout, 1);
}

#[test]
fn hostile_run_pages_are_errors() {
    // Int32 runs: `runs`, the values, `bits`, then `lengths` (minus one) packed in `bits`.
    let page = |runs: u32, values: &[i32], bits: u8, lengths: &[u64]| {
        let mut p = vec![0u8, encoding::RUNS];
        p.extend_from_slice(&runs.to_le_bytes());
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        push_shuffled(4, &bytes, &mut p);
        p.push(bits);
        crate::bits::pack(lengths.iter().map(|l| l - 1), bits as usize, &mut p);
        p
    };
    let good = page(2, &[1, 2], 3, &[3, 7]);
    let back = arrow_array::make_array(decode_page(&DataType::Int32, 10, &good).unwrap());
    assert_eq!(
        back.as_ref(),
        &Int32Array::from(vec![1, 1, 1, 2, 2, 2, 2, 2, 2, 2]) as &dyn Array
    );
    let mut wide_bits = page(2, &[1, 2], 3, &[3, 7]);
    let at = wide_bits.len() - 2;
    wide_bits[at] = 64;
    for (why, bad, n) in [
        ("no runs", page(0, &[], 0, &[]), 10),
        ("more runs than rows", page(3, &[1, 2, 3], 1, &[1, 1, 1]), 2),
        ("lengths short of the page", page(2, &[1, 2], 3, &[3, 6]), 10),
        ("lengths past the page", page(2, &[1, 2], 3, &[3, 8]), 10),
        ("lengths cut short", page(2, &[1, 2], 3, &[3, 7])[..14].to_vec(), 10),
        ("64-bit lengths", wide_bits, 10),
        ("a huge run count", page(u32::MAX, &[1], 4, &[10]), 10),
    ] {
        assert!(decode_page(&DataType::Int32, n, &bad).is_err(), "{why}");
        assert!(decode_page_rows(&DataType::Int32, n, &bad, 0..0).is_err(), "{why}");
    }
    // Lengths that would overflow a sum: errors, not wrap-arounds.
    let huge = page(2, &[1, 2], 63, &[1 << 62, 1 << 62]);
    assert!(decode_page(&DataType::Int32, 10, &huge).is_err());
    // 2-byte dictionary codes for more rows than can be addressed.
    let mut wide = vec![0u8, encoding::DICT, 0x2c, 1, 0, 0];
    wide.extend(std::iter::repeat_n(0u8, 300));
    wide.push(2);
    assert!(decode_page_rows(&DataType::UInt8, 1 << 63, &wide, 0..0).is_err());
}

#[test]
fn nulls_and_slices() {
    let with_nulls = Int32Array::from_iter((0..1000).map(|i| (i % 7 != 0).then_some(i % 50)));
    assert_eq!(round_trip(&with_nulls), encoding::FOR | SUMMARY_NULLS);
    let sliced = with_nulls.slice(3, 500);
    round_trip(&sliced);
    let bools = BooleanArray::from_iter((0..1001).map(|i| (i % 5 != 0).then_some(i % 3 == 0)));
    round_trip(&bools);
    round_trip(&bools.slice(5, 99));
    let all_null = Float64Array::from(vec![None; 17]);
    round_trip(&all_null);
}

#[test]
fn strings_plain_and_dictionary() {
    let words = StringArray::from_iter((0..1000).map(|i| (i % 11 != 0).then(|| format!("w{}", i * 7919))));
    assert_eq!(round_trip(&words), encoding::PLAIN | SUMMARY_NULLS);
    let cities = LargeStringArray::from_iter_values((0..1000).map(|i| ["Paris", "Oslo", "Lima"][i % 3]));
    assert_eq!(round_trip(&cities), encoding::DICT);
    round_trip(&cities.slice(10, 300));
    // Dictionary values around the 16-byte copy chunk, empty and multi-byte ones included.
    let values = [
        "",
        "a",
        "é15-bytes-abcd",
        "0123456789abcdef",
        "0123456789abcdefg",
        "ü".repeat(20).as_str(),
    ]
    .map(String::from);
    let mixed = StringArray::from_iter((0..1000).map(|i| (i % 13 != 0).then(|| values[i * 7 % 6].clone())));
    assert_eq!(round_trip(&mixed), encoding::DICT | SUMMARY_NULLS);
    let bytes = arrow_array::BinaryArray::from_iter((0..1000u32).map(|i| (i % 5 != 0).then(|| i.to_le_bytes())));
    assert_eq!(round_trip(&bytes), encoding::PLAIN | SUMMARY_NULLS);
}

#[test]
fn several_pieces_make_one_page() {
    let a = Int32Array::from_iter((0..100).map(|i| (i % 3 != 0).then_some(i)));
    let b = Int32Array::from_iter_values(100..250);
    let mut page = Vec::new();
    encode_page(
        &DataType::Int32,
        &[a.to_data().slice(7, 50), b.to_data()],
        &mut page,
        Some(kompakt::Codec::Zstd { level: 2 }),
    )
    .unwrap();
    let back = arrow_array::make_array(decode_page(&DataType::Int32, 200, &page).unwrap());
    let want: Vec<Option<i32>> = a.slice(7, 50).iter().chain(b.iter()).collect();
    assert_eq!(
        back.as_any()
            .downcast_ref::<Int32Array>()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        want
    );
}

#[test]
fn hostile_pages_are_errors() {
    // A dictionary code past the dictionary.
    let page = [0u8, encoding::DICT, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 5];
    assert!(decode_page(&DataType::Int64, 1, &page).is_err());
    // Strings whose lengths overflow.
    let mut page = vec![0u8, encoding::PLAIN, encoding::PLAIN];
    page.extend_from_slice(&u64::MAX.to_le_bytes());
    page.extend_from_slice(&0u64.to_le_bytes());
    assert!(decode_page(&DataType::LargeUtf8, 1, &page).is_err());
    // Invalid UTF-8.
    let mut page = vec![0u8, encoding::PLAIN, encoding::PLAIN, 2, 0, 0, 0];
    page.extend_from_slice(&2u64.to_le_bytes());
    page.extend_from_slice(&[0xff, 0xfe]);
    assert!(decode_page(&DataType::Utf8, 1, &page).is_err());
    assert!(decode_page(&DataType::Binary, 1, &page).is_ok());
}

/// `byte_array` with arbitrary offsets and data: the same verdict and array as
/// `GenericByteArray::try_new`, on both its ASCII path (no per-offset check) and the other.
fn byte_array_agrees<T: arrow_array::types::ByteArrayType>(data: &[u8], lengths: &[usize], nulls: Option<&[u8]>) {
    use arrow_buffer::{ArrowNativeType, BooleanBuffer, NullBuffer, OffsetBuffer};
    let n = lengths.len();
    let mut at = 0usize;
    let mut offsets = vec![T::Offset::usize_as(0)];
    for &l in lengths {
        at += l;
        offsets.push(T::Offset::usize_as(at));
    }
    let offset_bytes = Buffer::from_vec(offsets.clone());
    let validity = nulls.map(Buffer::from);
    let ours = byte_array::<T>(n, offset_bytes, Buffer::from(data), validity.clone());
    let theirs = arrow_array::GenericByteArray::<T>::try_new(
        OffsetBuffer::new(offsets.into()),
        Buffer::from(data),
        validity.map(|b| NullBuffer::new(BooleanBuffer::new(b, 0, n))),
    );
    match (ours, theirs) {
        (Ok(a), Ok(b)) => assert_eq!(arrow_array::make_array(a).as_ref(), &b as &dyn arrow_array::Array),
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "byte_array {:?}, try_new {:?} on {data:?} {lengths:?}",
            a.is_ok(),
            b.is_ok()
        ),
    }
}

#[test]
fn byte_array_checks_like_try_new() {
    use arrow_array::types::{BinaryType, LargeUtf8Type, Utf8Type};
    let cases: &[(&[u8], &[usize])] = &[
        (b"", &[]),
        (b"", &[0, 0]),
        (b"abc", &[1, 2]),
        (b"abc", &[1, 1]),             // data longer than the offsets say: allowed
        (b"abc", &[2, 2]),             // an offset past the data
        ("héllo".as_bytes(), &[2, 4]), // split inside "é"
        ("héllo".as_bytes(), &[3, 3]),
        (&[0x61, 0xff, 0x62], &[1, 2]), // not UTF-8
        (&[0x80], &[1]),
    ];
    for (data, lengths) in cases {
        byte_array_agrees::<Utf8Type>(data, lengths, None);
        byte_array_agrees::<LargeUtf8Type>(data, lengths, None);
        byte_array_agrees::<BinaryType>(data, lengths, None);
        byte_array_agrees::<Utf8Type>(data, lengths, Some(&[0b10]));
    }
}

/// A `Utf8`/`Binary` page of strings cut from `data` at `lengths` (which add up to it),
/// plain, or as a dictionary of those strings indexed by `codes`.
fn string_page(data: &[u8], lengths: &[usize], codes: Option<&[u8]>) -> Vec<u8> {
    let mut page = vec![
        0u8,
        if codes.is_some() {
            encoding::DICT
        } else {
            encoding::PLAIN
        },
    ];
    if codes.is_some() {
        page.extend_from_slice(&(lengths.len() as u32).to_le_bytes());
    }
    let raw: Vec<u8> = lengths.iter().flat_map(|&l| (l as u32).to_le_bytes()).collect();
    let mut shuffled = vec![0u8; raw.len()];
    shuffle(4, &raw, &mut shuffled);
    page.push(encoding::PLAIN);
    page.extend_from_slice(&shuffled);
    page.extend_from_slice(&(data.len() as u64).to_le_bytes());
    page.extend_from_slice(data);
    if let Some(codes) = codes {
        page.push(1);
        page.extend_from_slice(codes);
    }
    page
}

proptest::proptest! {
    #[test]
    fn string_views_check_like_try_new_on_any_bytes(
        data in proptest::collection::vec(proptest::prop_oneof![0u8..0x80, proptest::num::u8::ANY], 0..60),
        cuts in proptest::collection::vec(0usize..60, 1..8),
        codes in proptest::collection::vec(0u8..8, 0..30),
        dictionary in proptest::bool::ANY,
    ) {
        // Views of any bytes, cut anywhere (inside characters too, short and long values):
        // the page decodes as views exactly when `StringArray::try_new` accepts its strings
        // (for a dictionary page, its values), and what decodes is valid and equal.
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
        cuts.sort_unstable();
        cuts.push(data.len());
        let lengths: Vec<usize> = cuts.iter().scan(0, |at, &c| { let l = c - *at; *at = c; Some(l) }).collect();
        let mut offsets = vec![0i32];
        offsets.extend(cuts.iter().map(|&c| c as i32));
        let values = StringArray::try_new(
            arrow_buffer::OffsetBuffer::new(offsets.clone().into()), Buffer::from(data.as_slice()), None);
        let codes: Vec<u8> = codes.iter().map(|&x| x % lengths.len() as u8).collect();
        let (page, n) = match dictionary {
            true => (string_page(&data, &lengths, Some(&codes)), codes.len()),
            false => (string_page(&data, &lengths, None), lengths.len()),
        };
        for (dt, utf8) in [(DataType::Utf8, true), (DataType::Binary, false)] {
            let got = decode_page_rows_as(&dt, StringLayout::View, n, &page, 0..n);
            proptest::prop_assert_eq!(got.is_ok(), values.is_ok() || !utf8, "{:?}", got.as_ref().err());
            let Ok(got) = got else { continue };
            got.validate_full().unwrap();
            let binary = arrow_array::BinaryArray::new(
                arrow_buffer::OffsetBuffer::new(offsets.clone().into()), Buffer::from(data.as_slice()), None);
            let want: Vec<&[u8]> = match dictionary {
                true => codes.iter().map(|&x| binary.value(usize::from(x))).collect(),
                false => binary.iter().map(Option::unwrap).collect(),
            };
            let got = arrow_array::make_array(got);
            let got: Vec<&[u8]> = match utf8 {
                true => got.as_any().downcast_ref::<arrow_array::StringViewArray>().unwrap().iter().map(|v| v.unwrap().as_bytes()).collect(),
                false => got.as_any().downcast_ref::<arrow_array::BinaryViewArray>().unwrap().iter().map(Option::unwrap).collect(),
            };
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn byte_array_checks_like_try_new_on_any_bytes(
        data in proptest::collection::vec(proptest::prop_oneof![0u8..0x80, proptest::num::u8::ANY], 0..40),
        cuts in proptest::collection::vec(0usize..48, 0..8),
    ) {
        let mut cuts = cuts;
        cuts.sort_unstable();
        let lengths: Vec<usize> = cuts.iter().scan(0, |at, &c| { let l = c - *at; *at = c; Some(l) }).collect();
        byte_array_agrees::<arrow_array::types::Utf8Type>(&data, &lengths, None);
        byte_array_agrees::<arrow_array::types::LargeBinaryType>(&data, &lengths, None);
    }

    #[test]
    fn dictionary_strings_round_trip(
        values in proptest::collection::vec("[a-c\\x{e9}\\x{1F600}]{0,40}", 1..6),
        picks in proptest::collection::vec((0usize..6, 0u8..10), 100..400),
    ) {
        // Long, short and empty values, multi-byte ones, nulls: both offset widths.
        let rows = picks.iter().map(|&(i, null)| (null != 0).then(|| values[i % values.len()].as_str()));
        let small = StringArray::from_iter(rows.clone());
        let large = LargeStringArray::from_iter(rows);
        for arr in [&small as &dyn Array, &large] {
            let summary = round_trip(arr);
            proptest::prop_assert_eq!(summary & 0x7f, encoding::DICT);
        }
    }
}

proptest::proptest! {
    #[test]
    fn string_offsets_never_decrease(
        lengths in proptest::collection::vec(proptest::prop_oneof![40 => 0u64..40, 1 => proptest::num::u64::ANY], 0..20),
        codes in proptest::collection::vec(0u8..20, 0..60),
        large in proptest::bool::ANY,
        dictionary in proptest::bool::ANY,
    ) {
        // String pages with hostile lengths, plain or as a dictionary: a page whose
        // lengths sum past what the offsets can hold fails, and every page that decodes
        // has offsets that `OffsetBuffer::new`'s own check accepts (what `byte_array`'s
        // `new_unchecked` relies on).
        let (ow, dt) = if large { (8usize, DataType::LargeUtf8) } else { (4, DataType::Utf8) };
        let stored = |l: u64| if ow == 8 { l } else { l & 0xFFFF_FFFF };
        let limit = if ow == 8 { i64::MAX as u64 } else { i32::MAX as u64 };
        let mut raw = Vec::new();
        for &l in &lengths {
            raw.extend_from_slice(&l.to_le_bytes()[..ow]);
        }
        let mut shuffled = vec![0u8; raw.len()];
        shuffle(ow, &raw, &mut shuffled);
        let sum = |ls: &mut dyn Iterator<Item = u64>| ls.fold(0u64, |a, l| a.saturating_add(l));
        let dict_sum = sum(&mut lengths.iter().map(|&l| stored(l)));
        // The data holds what the lengths claim when that is small; hostile sums get 4 KiB.
        let data_len = if dict_sum <= 1 << 12 { dict_sum } else { 1 << 12 };
        // Codes within the dictionary (a code past it is another test's subject).
        let codes: Vec<u8> = codes.iter().map(|&x| x % lengths.len().max(1) as u8).collect();
        let mut page = vec![0u8];
        let (n, total) = if dictionary {
            let n = codes.len();
            page.push(encoding::DICT);
            page.extend_from_slice(&(lengths.len() as u32).to_le_bytes());
            let total = sum(&mut codes.iter().map(|&x| lengths.get(usize::from(x)).map_or(0, |&l| stored(l))));
            (n, total)
        } else {
            page.push(encoding::PLAIN);
            (lengths.len(), dict_sum)
        };
        page.push(encoding::PLAIN);
        page.extend_from_slice(&shuffled);
        page.extend_from_slice(&data_len.to_le_bytes());
        page.extend(std::iter::repeat_n(b'a', data_len as usize));
        if dictionary {
            page.push(1);
            page.extend_from_slice(&codes);
        }
        let got = decode_page(&dt, n, &page);
        if total > limit {
            proptest::prop_assert!(got.is_err(), "{total} bytes of strings in a page");
        }
        // As views: whatever decodes is a valid array; what decodes as stored decodes as
        // views too, to the same values.
        let views = decode_page_rows_as(&dt, StringLayout::View, n, &page, 0..n);
        if let Ok(v) = &views {
            v.validate_full().unwrap();
        }
        if let (Ok(stored), false) = (&got, large) {
            let views = arrow_array::make_array(views.unwrap());
            let want = read_as(arrow_array::make_array(stored.clone()).as_ref(), StringLayout::View).unwrap();
            proptest::prop_assert_eq!(views.as_ref(), want.as_ref());
        }
        // Widened as they decode: the same verdict, the same offsets as 64-bit values.
        let wide = decode_page_rows_as(&dt, StringLayout::Large, n, &page, 0..n);
        proptest::prop_assert_eq!(wide.is_ok(), got.is_ok());
        if let (Ok(narrow), Ok(wide), false) = (&got, &wide, large) {
            let offsets = |d: &ArrayData, w: usize| -> Vec<u64> {
                d.buffers()[0].as_slice().chunks(w).map(|c| {
                    let mut a = [0u8; 8];
                    a[..w].copy_from_slice(c);
                    u64::from_le_bytes(a)
                }).take(n + 1).collect()
            };
            proptest::prop_assert_eq!(offsets(narrow, 4), offsets(wide, 8));
            proptest::prop_assert_eq!(wide.data_type(), &DataType::LargeUtf8);
            proptest::prop_assert_eq!(narrow.buffers()[1].as_slice(), wide.buffers()[1].as_slice());
        }
        if let Ok(data) = got {
            let offsets = &data.buffers()[0];
            if large {
                arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::<i64>::new(offsets.clone(), 0, n + 1));
            } else {
                arrow_buffer::OffsetBuffer::new(arrow_buffer::ScalarBuffer::<i32>::new(offsets.clone(), 0, n + 1));
            }
            proptest::prop_assert_eq!(data.len(), n);
        }
    }
}

#[test]
fn one_budget_covers_every_part_of_a_page() {
    use arrow_array::builder::{Int64Builder, ListBuilder};
    // Lists of lists of int64: offsets at two levels, then the values.
    let mut b = ListBuilder::new(ListBuilder::new(Int64Builder::new()));
    for i in 0..64i64 {
        for j in 0..8 {
            b.values().values().append_slice(&[i, j, i * j, 7]);
            b.values().append(true);
        }
        b.append(true);
    }
    let arr = b.finish();
    let dt = arr.data_type().clone();
    let mut page = Vec::new();
    encode_page(
        &dt,
        &[arr.to_data()],
        &mut page,
        Some(kompakt::Codec::Zstd { level: 2 }),
    )
    .unwrap();
    // Decoded: 65 + 513 offsets of 4 bytes, 2048 values of 8 (the largest part, 16 KiB), and
    // the values' nested dictionary: its distinct values of 8 bytes.
    let distinct: std::collections::HashSet<i64> = (0..64i64)
        .flat_map(|i| (0..8).flat_map(move |j| [i, j, i * j, 7]))
        .collect();
    let total = (65 + 513) * 4 + 2048 * 8 + distinct.len() as u64 * 8;
    let whole = decode_rows_within(&dt, StringLayout::AsStored, 64, &page, 0..64, total, None).unwrap();
    assert_eq!(arrow_array::make_array(whole).as_ref(), &arr as &dyn Array);
    // Enough for each part on its own, not for all of them.
    let err = decode_rows_within(&dt, StringLayout::AsStored, 64, &page, 0..64, total - 1, None).unwrap_err();
    assert!(err.to_string().contains("the page decodes to more than"), "{err}");
}

#[test]
fn integers_with_a_common_factor_are_scaled() {
    // Whole hours in microseconds, slowly rising: the quotients are hours, as deltas.
    let hours = arrow_array::TimestampMicrosecondArray::from_iter_values(
        (0..16_384i64).map(|i| 1_356_998_400_000_000 + 3_600_000_000 * (i / 40 + (i * 7919) % 3)),
    );
    let enc = round_trip_page(&hours);
    assert_eq!((enc.summary, enc.layout), (encoding::SCALED, 3));
    // A factor across zero, with nulls, and one of 2^62 in 8 bytes.
    let steps = Int32Array::from_iter((0..5000).map(|i| (i % 11 != 0).then_some(((i * 7919) % 2001 - 1000) * 5)));
    assert_eq!(round_trip(&steps), encoding::SCALED | SUMMARY_NULLS);
    let huge = Int64Array::from_iter_values((0..3000).map(|i| [i64::MIN, 0, 1 << 62][i % 3]));
    assert_eq!(round_trip(&huge), encoding::SCALED);
    let bytes = arrow_array::UInt8Array::from_iter_values((0..3000u32).map(|i| (i * 7919 % 25 * 10) as u8));
    round_trip(&bytes);
    // No common factor: no scaling.
    let plain = Int64Array::from_iter_values((0..3000).map(|i| (i * 7919) % 100_000 * 2 + i % 2));
    assert_ne!(round_trip(&plain), encoding::SCALED);
}

#[test]
fn decimal_floats_round_trip_exactly() {
    // Two decimals, with nulls: exact on every value.
    let humid =
        Float64Array::from_iter((0..16_384u64).map(|i| (i % 13 != 0).then_some((i * 7919 % 10_000) as f64 / 100.0)));
    assert_eq!(round_trip(&humid), encoding::DECIMAL | SUMMARY_NULLS);
    // Integers stored as floats (departure times with NaN made null).
    let times = Float64Array::from_iter_values((0..16_384u64).map(|i| (i * 7919 % 2400) as f64));
    assert_eq!(round_trip(&times), encoding::DECIMAL);
    // A few values that are not decimals of the page's power: exceptions, bit for bit.
    let odd = [
        f64::NAN,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.0 / 3.0,
        1e300,
        f64::from_bits(0x7ff8_dead_beef_0001),
    ];
    let mixed: Vec<f64> = (0..16_384u64)
        .map(|i| {
            if i % 1000 == 7 {
                odd[(i / 1000) as usize % odd.len()]
            } else {
                (i * 31 % 5000) as f64 * 0.25 - 600.0
            }
        })
        .collect();
    let arr = Float64Array::from(mixed.clone());
    let data = arr.to_data();
    let mut page = Vec::new();
    let enc = encode_page(arr.data_type(), std::slice::from_ref(&data), &mut page, None).unwrap();
    assert_eq!(enc.summary, encoding::DECIMAL);
    let back = decode_page(arr.data_type(), arr.len(), &page).unwrap();
    let back = Float64Array::from(back);
    for (a, b) in mixed.iter().zip(back.values()) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    round_trip(&arr);
    // Random prices with two decimals and one computed sum (0.1 + 0.2 needs 17): the power
    // stays 10^2 and the sum is the one exception, not a reason to give the page up.
    let mut x = 3u64;
    let mut prices: Vec<f64> = (0..16_384)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) % 1_000_000) as f64 / 100.0
        })
        .collect();
    prices[5] = 0.1 + 0.2;
    let arr = Float64Array::from(prices);
    let mut page = Vec::new();
    encode_page(arr.data_type(), &[arr.to_data()], &mut page, None).unwrap();
    assert_eq!(page[1], encoding::DECIMAL);
    assert_eq!(page[2], 2, "the power of ten");
    round_trip(&arr);
    // Leading exceptions take the first code, so the codes' range stays narrow.
    let leading: Vec<f64> = (0..4096)
        .map(|i| {
            if i < 3 {
                f64::NAN
            } else {
                1000.0 + (i * 7 % 3000) as f64 / 10.0
            }
        })
        .collect();
    let arr = Float64Array::from(leading);
    let mut page = Vec::new();
    encode_page(arr.data_type(), &[arr.to_data()], &mut page, None).unwrap();
    assert_eq!(page[1], encoding::DECIMAL);
    round_trip(&arr);
    // float32 with 1 decimal.
    let f32s = arrow_array::Float32Array::from_iter_values((0..5000i32).map(|i| (i * 7919 % 1000 - 200) as f32 / 10.0));
    assert_eq!(round_trip(&f32s), encoding::DECIMAL);
    // Too many exceptions, or random floats: not decimal.
    let noise = Float64Array::from_iter_values(
        (0..4096u64).map(|i| f64::from_bits(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 2)),
    );
    assert_ne!(round_trip(&noise), encoding::DECIMAL);
    let thirds = Float64Array::from_iter_values((0..4096u64).map(|i| (i * 7919 % 3000) as f64 / 3.0));
    assert_ne!(round_trip(&thirds), encoding::DECIMAL);
}

#[test]
fn hostile_scaled_and_decimal_pages_are_errors() {
    // Int64, 4 rows: a scaled page (base 0, factor f) of plain quotients.
    let scaled = |factor: u64, inner: u8| {
        let mut p = vec![0u8, encoding::SCALED];
        p.extend_from_slice(&0u64.to_le_bytes());
        p.extend_from_slice(&factor.to_le_bytes());
        p.push(inner);
        p
    };
    let mut good = scaled(3, encoding::PLAIN);
    push_shuffled(
        8,
        &[1u64, 2, 3, 4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
        &mut good,
    );
    let back = decode_page(&DataType::Int64, 4, &good).unwrap();
    assert_eq!(Int64Array::from(back).values().as_ref(), &[3, 6, 9, 12]);
    for factor in [0u64, 1] {
        let mut p = good.clone();
        p[10..18].copy_from_slice(&factor.to_le_bytes());
        assert!(decode_page(&DataType::Int64, 4, &p).is_err(), "factor {factor}");
    }
    // Nested scaling, and a decimal page in an integer column or inside a scaled page.
    let mut nested = scaled(3, encoding::SCALED);
    nested.extend_from_slice(&[0u8; 16]);
    nested.push(encoding::PLAIN);
    nested.extend_from_slice(&[0u8; 32]);
    assert!(decode_page(&DataType::Int64, 4, &nested).is_err());
    let mut decimal_in_int = vec![0u8, encoding::DECIMAL, 2, encoding::PLAIN];
    decimal_in_int.extend_from_slice(&[0u8; 32]);
    decimal_in_int.extend_from_slice(&0u32.to_le_bytes());
    assert!(decode_page(&DataType::Int64, 4, &decimal_in_int).is_err());
    assert_eq!(decode_page(&DataType::Float64, 4, &decimal_in_int).unwrap().len(), 4);
    // Decimal pages: power of ten too large, exceptions out of order, past the page, too many.
    let decimal = |e: u8, exceptions: &[(u32, f64)], count: u32| {
        let mut p = vec![0u8, encoding::DECIMAL, e, encoding::PLAIN];
        p.extend_from_slice(&[0u8; 32]);
        p.extend_from_slice(&count.to_le_bytes());
        for (pos, _) in exceptions {
            p.extend_from_slice(&pos.to_le_bytes());
        }
        for (_, v) in exceptions {
            p.extend_from_slice(&v.to_le_bytes());
        }
        p
    };
    let ok = decimal(18, &[(0, 1.5), (3, f64::NAN)], 2);
    let back = Float64Array::from(decode_page(&DataType::Float64, 4, &ok).unwrap());
    assert_eq!(back.value(0), 1.5);
    assert!(back.value(3).is_nan());
    assert_eq!(back.value(1), 0.0);
    let bad = [
        decimal(19, &[], 0),
        decimal(2, &[(3, 1.0), (1, 2.0)], 2),
        decimal(2, &[(1, 1.0), (1, 2.0)], 2),
        decimal(2, &[(4, 1.0)], 1),
        decimal(2, &[(0, 1.0)], 5),
        decimal(2, &[(0, 1.0)], u32::MAX),
    ];
    for (i, p) in bad.iter().enumerate() {
        assert!(decode_page(&DataType::Float64, 4, p).is_err(), "case {i}");
    }
    // A float32 decimal page allows powers up to 10^10.
    let mut f32_page = vec![0u8, encoding::DECIMAL, 11, encoding::PLAIN];
    f32_page.extend_from_slice(&[0u8; 16]);
    f32_page.extend_from_slice(&0u32.to_le_bytes());
    assert!(decode_page(&DataType::Float32, 4, &f32_page).is_err());
    f32_page[2] = 10;
    assert!(decode_page(&DataType::Float32, 4, &f32_page).is_ok());
}

/// Floats of one column bit for bit, whatever page they were stored in.
fn float_bits(a: &dyn Array) -> Vec<Option<u64>> {
    use arrow_array::cast::AsArray;
    match a.data_type() {
        DataType::Float64 => a
            .as_primitive::<arrow_array::types::Float64Type>()
            .iter()
            .map(|v| v.map(f64::to_bits))
            .collect(),
        _ => a
            .as_primitive::<arrow_array::types::Float32Type>()
            .iter()
            .map(|v| v.map(|x| u64::from(x.to_bits())))
            .collect(),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Decimals of a few powers of ten, with nulls and odd values mixed in (NaN payloads,
    /// -0.0, infinities, subnormals, values of more decimals): every page, whichever encoding
    /// it chose, gives back every float bit for bit, whole and in windows.
    #[test]
    fn decimal_like_floats_round_trip_bit_for_bit(
        codes in proptest::collection::vec(-2_000_000i64..2_000_000, 1..3000),
        e in 0u32..6,
        odd in proptest::collection::vec((0usize..3000, proptest::num::u64::ANY), 0..40),
        nulls in proptest::collection::vec(0usize..3000, 0..40),
        single in proptest::bool::ANY,
        window in (0usize..3000, 0usize..3000),
    ) {
        let n = codes.len();
        let mut values: Vec<f64> = codes.iter().map(|&c| c as f64 / 10f64.powi(e as i32)).collect();
        for &(at, bits) in &odd {
            let special = [f64::from_bits(bits), -0.0, f64::INFINITY, 5e-324, 0.1 + 0.2, f64::from_bits(0x7ff0_0000_0000_0001)];
            values[at % n] = special[(bits % 6) as usize];
        }
        let valid: Vec<bool> = (0..n).map(|i| !nulls.iter().any(|&k| k % n == i)).collect();
        let arr: std::sync::Arc<dyn Array> = if single {
            std::sync::Arc::new(arrow_array::Float32Array::from(
                values.iter().zip(&valid).map(|(&v, &ok)| ok.then_some(v as f32)).collect::<Vec<_>>(),
            ))
        } else {
            std::sync::Arc::new(Float64Array::from(
                values.iter().zip(&valid).map(|(&v, &ok)| ok.then_some(v)).collect::<Vec<_>>(),
            ))
        };
        let data = arr.to_data();
        let mut page = Vec::new();
        let enc = encode_page(arr.data_type(), std::slice::from_ref(&data), &mut page, Some(kompakt::Codec::Zstd { level: 1 })).unwrap();
        if enc.summary & 0x7f == encoding::DECIMAL {
            // 4 when sparse nulls are stored as their row numbers, 7 when the valid rows'
            // values only, 8 when the codes are a dictionary's packed codes, 9 when they are
            // a nested dictionary.
            proptest::prop_assert!(matches!(enc.layout, 3 | 4 | 7 | 8 | 9), "layout {}", enc.layout);
        }
        let back = arrow_array::make_array(decode_page(arr.data_type(), n, &page).unwrap());
        proptest::prop_assert_eq!(float_bits(back.as_ref()), float_bits(arr.as_ref()));
        let (a, b) = (window.0 % (n + 1), window.1 % (n + 1));
        let (a, b) = (a.min(b), a.max(b));
        let part = arrow_array::make_array(decode_page_rows(arr.data_type(), n, &page, a..b).unwrap());
        proptest::prop_assert_eq!(float_bits(part.as_ref()), float_bits(arr.slice(a, b - a).as_ref()));
    }

    /// Integers with a common factor around any base (wrapping at the type's ends included).
    #[test]
    fn scaled_integers_round_trip(
        quotients in proptest::collection::vec(0u64..5000, 1..3000),
        factor in 2u64..1_000_000_000,
        base in proptest::num::i64::ANY,
        width in 0usize..4,
        window in (0usize..3000, 0usize..3000),
    ) {
        let n = quotients.len();
        let value = |q: u64| base.wrapping_add(factor.wrapping_mul(q) as i64);
        let arr: std::sync::Arc<dyn Array> = match width {
            0 => std::sync::Arc::new(arrow_array::Int8Array::from_iter_values(quotients.iter().map(|&q| value(q) as i8))),
            1 => std::sync::Arc::new(arrow_array::Int16Array::from_iter_values(quotients.iter().map(|&q| value(q) as i16))),
            2 => std::sync::Arc::new(Int32Array::from_iter_values(quotients.iter().map(|&q| value(q) as i32))),
            _ => std::sync::Arc::new(Int64Array::from_iter_values(quotients.iter().map(|&q| value(q)))),
        };
        let data = arr.to_data();
        let mut page = Vec::new();
        encode_page(arr.data_type(), std::slice::from_ref(&data), &mut page, Some(kompakt::Codec::Zstd { level: 1 })).unwrap();
        let back = arrow_array::make_array(decode_page(arr.data_type(), n, &page).unwrap());
        proptest::prop_assert_eq!(back.as_ref(), arr.as_ref());
        let (a, b) = (window.0 % (n + 1), window.1 % (n + 1));
        let (a, b) = (a.min(b), a.max(b));
        let part = arrow_array::make_array(decode_page_rows(arr.data_type(), n, &page, a..b).unwrap());
        let want = arr.slice(a, b - a);
        proptest::prop_assert_eq!(part.as_ref(), want.as_ref());
    }
}

#[test]
fn sparse_nulls_are_stored_as_row_numbers() {
    let sparse = Int64Array::from_iter((0..5000i64).map(|i| (i % 100 != 42).then_some(i * 3)));
    let enc = round_trip_page(&sparse);
    assert_eq!(enc.layout, 4);
    let mut page = Vec::new();
    encode_page(sparse.data_type(), &[sparse.to_data()], &mut page, None).unwrap();
    assert_eq!(page[0], validity::NULL_ROWS);
    // Nulls in every 16th row: the bitmap (every 8th and more: the bitmap and the valid rows'
    // values only); small pages: the bitmap.
    let dense = Int64Array::from_iter((0..5000i64).map(|i| (i % 16 != 1).then_some(i)));
    let mut page = Vec::new();
    encode_page(dense.data_type(), &[dense.to_data()], &mut page, None).unwrap();
    assert_eq!(page[0], validity::BITMAP);
    let small = Int64Array::from_iter((0..500i64).map(|i| (i != 7).then_some(i)));
    let mut page = Vec::new();
    encode_page(small.data_type(), &[small.to_data()], &mut page, None).unwrap();
    assert_eq!(page[0], validity::BITMAP);
    // Strings, booleans, structs' fields and sliced arrays too.
    let strings = StringArray::from_iter((0..3000).map(|i| (i % 300 != 1).then(|| format!("v{i}"))));
    round_trip(&strings);
    round_trip(&strings.slice(7, 2500));
    let bools = BooleanArray::from_iter((0..3000).map(|i| (i % 999 != 5).then_some(i % 3 == 0)));
    round_trip(&bools);
}

#[test]
fn hostile_null_rows_are_errors() {
    let n = 64;
    // A page of 64 int64 rows, plain, after the validity given.
    let page = |validity: &[u8]| {
        let mut p = validity.to_vec();
        p.push(encoding::PLAIN);
        p.extend(std::iter::repeat_n(0u8, 8 * n));
        p
    };
    let rows = |k: u32, rows: &[u32]| {
        let mut v = vec![validity::NULL_ROWS];
        v.extend_from_slice(&k.to_le_bytes());
        v.push(encoding::PLAIN);
        let words: Vec<u8> = rows.iter().flat_map(|r| r.to_le_bytes()).collect();
        push_shuffled(4, &words, &mut v);
        v
    };
    let good = decode_page(&DataType::Int64, n, &page(&rows(2, &[3, 60]))).unwrap();
    assert_eq!(good.null_count(), 2);
    assert!(good.is_null(3) && good.is_null(60) && good.is_valid(4));
    for (what, validity) in [
        ("no rows", rows(0, &[])),
        ("more rows than the page", {
            let mut v = vec![validity::NULL_ROWS];
            v.extend_from_slice(&65u32.to_le_bytes());
            v
        }),
        ("a row past the page", rows(1, &[64])),
        ("rows out of order", rows(2, &[9, 3])),
        ("a row twice", rows(2, &[9, 9])),
        ("an unknown kind", vec![3]),
    ] {
        let err = decode_page(&DataType::Int64, n, &page(&validity)).unwrap_err();
        assert!(err.is_corruption(), "{what}: {err}");
    }
}

/// A dictionary of `values` as the reader builds it.
fn column_dict(values: &[&str]) -> ColumnDict {
    ColumnDict::new(&StringArray::from(values.to_vec()).to_data()).unwrap()
}

#[test]
fn pages_coded_against_a_column_dictionary() {
    let dict = column_dict(&["", "Oslo", "a city name longer than twelve bytes", "Lima"]);
    let codes: Vec<u32> = (0..3000u32).map(|i| i * 7 % 4).collect();
    let valid: Vec<bool> = (0..3000).map(|i| i % 500 != 3).collect();
    let names = ["", "Oslo", "a city name longer than twelve bytes", "Lima"];
    let expected = StringArray::from_iter(
        codes
            .iter()
            .zip(&valid)
            .map(|(&c, &ok)| ok.then_some(names[c as usize])),
    );
    let mut page = Vec::new();
    let (enc, inner) = encode_coded_values(
        &DataType::Utf8,
        &[expected.to_data()],
        &codes,
        &mut page,
        Some(kompakt::Codec::Zstd { level: 2 }),
        None,
    )
    .unwrap();
    assert_eq!(enc.summary, encoding::COLUMN_DICT | SUMMARY_NULLS);
    assert_eq!(enc.layout, 4);
    assert_eq!(inner, encoding::BITPACK);
    for (rows, layout) in [
        (0..3000, StringLayout::AsStored),
        (10..2999, StringLayout::AsStored),
        (0..3000, StringLayout::Large),
        (0..3000, StringLayout::View),
        (500..501, StringLayout::View),
    ] {
        let got = decode_page_rows_with(&DataType::Utf8, layout, 3000, &page, rows.clone(), Some(&dict)).unwrap();
        got.validate_full().unwrap();
        let want = expected.slice(rows.start, rows.len());
        let got = arrow_array::make_array(got);
        match layout {
            StringLayout::AsStored => assert_eq!(got.as_ref(), &want as &dyn Array),
            _ => assert_eq!(got.as_ref(), read_as(&want, layout).unwrap().as_ref(), "{layout:?}"),
        }
    }
    // Without the dictionary, or with a smaller one: corrupt, never a panic.
    let err = decode_page(&DataType::Utf8, 3000, &page).unwrap_err();
    assert!(err.to_string().contains("column without one"), "{err}");
    let small = column_dict(&["x", "y"]);
    for layout in [StringLayout::AsStored, StringLayout::View] {
        let err = decode_page_rows_with(&DataType::Utf8, layout, 3000, &page, 0..3000, Some(&small)).unwrap_err();
        assert!(err.to_string().contains("not below the dictionary size 2"), "{err}");
    }
    for cut in 0..page.len() {
        assert!(decode_page_rows_with(
            &DataType::Utf8,
            StringLayout::AsStored,
            3000,
            &page[..cut],
            0..3000,
            Some(&dict)
        )
        .is_err());
    }
}

#[test]
fn only_top_level_strings_use_the_column_dictionary() {
    // A struct whose string field claims to be coded against the column's dictionary.
    let dict = column_dict(&["a", "b"]);
    let mut page = vec![validity::VALID, validity::VALID, encoding::COLUMN_DICT, encoding::PLAIN];
    push_shuffled(4, &[0u8; 16], &mut page);
    let dt = DataType::Struct(vec![arrow_schema::Field::new("s", DataType::Utf8, false)].into());
    let err = decode_page_rows_with(&dt, StringLayout::AsStored, 4, &page, 0..4, Some(&dict)).unwrap_err();
    assert!(err.to_string().contains("column without one"), "{err}");
    // The same field at the top level reads.
    let top = decode_page_rows_with(
        &DataType::Utf8,
        StringLayout::AsStored,
        4,
        &page[1..],
        0..4,
        Some(&dict),
    )
    .unwrap();
    assert_eq!(
        arrow_array::make_array(top).as_ref(),
        &StringArray::from(vec!["a"; 4]) as &dyn Array
    );
}

#[test]
fn column_dictionaries_of_every_string_type() {
    use arrow_array::{BinaryArray, LargeBinaryArray};
    let values: Vec<&[u8]> = vec![b"", b"\xff\x00binary", b"x"];
    for dict_values in [
        BinaryArray::from(values.clone()).to_data(),
        LargeBinaryArray::from(values.clone()).to_data(),
        BinaryArray::from(values.clone()).slice(1, 2).to_data(),
    ] {
        let dict = ColumnDict::new(&dict_values).unwrap();
        let d = dict.len() as u32;
        let codes: Vec<u32> = (0..100).map(|i| i % d).collect();
        let rows = BinaryArray::from(vec![b"".as_slice(); 100]);
        let mut page = Vec::new();
        encode_coded_values(&DataType::Utf8, &[rows.to_data()], &codes, &mut page, None, None).unwrap();
        let all = arrow_array::make_array(dict_values.clone());
        for dt in [DataType::Binary, DataType::LargeBinary] {
            let got = decode_page_rows_with(&dt, StringLayout::AsStored, 100, &page, 0..100, Some(&dict)).unwrap();
            got.validate_full().unwrap();
            let got = arrow_array::make_array(got);
            for (i, &c) in codes.iter().enumerate() {
                let value = |a: &dyn Array, i: usize| -> Vec<u8> {
                    use arrow_array::cast::AsArray;
                    match a.data_type() {
                        DataType::Binary => a.as_binary::<i32>().value(i).to_vec(),
                        _ => a.as_binary::<i64>().value(i).to_vec(),
                    }
                };
                assert_eq!(value(got.as_ref(), i), value(all.as_ref(), c as usize));
            }
        }
    }
    // Nulls in a dictionary are corrupt.
    let with_null = StringArray::from(vec![Some("a"), None]).to_data();
    assert!(ColumnDict::new(&with_null).unwrap_err().is_corruption());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any strings coded against any dictionary holding them read back, whole, in windows and
    /// as views.
    #[test]
    fn column_dictionary_pages_round_trip(
        words in proptest::collection::vec("[a-zé]{0,20}", 1..50),
        picks in proptest::collection::vec((0usize..1000, proptest::bool::weighted(0.9)), 1..2000),
        window in (0usize..2000, 0usize..2000),
    ) {
        let dict_values: Vec<&str> = words.iter().map(String::as_str).collect();
        let dict = column_dict(&dict_values);
        let codes: Vec<u32> = picks.iter().map(|&(p, _)| (p % words.len()) as u32).collect();
        let rows = StringArray::from_iter(picks.iter().zip(&codes).map(|(&(_, ok), &c)| ok.then_some(dict_values[c as usize])));
        let mut page = Vec::new();
        encode_coded_values(&DataType::Utf8, &[rows.to_data()], &codes, &mut page, Some(kompakt::Codec::Zstd { level: 1 }), None).unwrap();
        let n = rows.len();
        let (a, b) = (window.0 % (n + 1), window.1 % (n + 1));
        let (a, b) = (a.min(b), a.max(b));
        for layout in [StringLayout::AsStored, StringLayout::View] {
            let got = decode_page_rows_with(&DataType::Utf8, layout, n, &page, a..b, Some(&dict)).unwrap();
            got.validate_full().unwrap();
            let want = rows.slice(a, b - a);
            let got = arrow_array::make_array(got);
            match layout {
                StringLayout::AsStored => proptest::prop_assert_eq!(got.as_ref(), &want as &dyn Array),
                _ => {
                    let want = read_as(&want, layout).unwrap();
                    proptest::prop_assert_eq!(got.as_ref(), want.as_ref());
                }
            }
        }
    }
}

/// Encodes `arr` (a string or binary array) as a symbol page with a table trained on
/// `training`, checks it decodes back, and returns the page.
fn round_trip_symbols(arr: &dyn Array, training: &[&[u8]]) -> Vec<u8> {
    let table = SymbolTable::train(training);
    let mut page = Vec::new();
    let e = encode_symbol_page(arr.data_type(), &[arr.to_data()], &table, &mut page).unwrap();
    assert_eq!(e.summary & 0x7f, encoding::SYMBOLS);
    assert_eq!(e.layout, 5);
    check_decodes(arr, &page);
    page
}

fn urls(n: usize) -> Vec<Option<String>> {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    (0..n)
        .map(|i| match i % 97 {
            13 => None,
            14 => Some(String::new()),
            15 => Some("ünïcödé ✓".to_string()),
            _ => Some(format!(
                "https://example.com/{}/{}",
                words[i * 7 % 8],
                i * 7919 % 100_000
            )),
        })
        .collect()
}

#[test]
fn strings_coded_with_a_symbol_table() {
    use arrow_array::{BinaryArray, LargeBinaryArray};
    let values = urls(1500);
    let training: Vec<&[u8]> = values.iter().flatten().map(|s| s.as_bytes()).collect();
    let raw: usize = training.iter().map(|v| v.len()).sum();
    let utf8 = StringArray::from(values.clone());
    let page = round_trip_symbols(&utf8, &training);
    // The symbols stand for several bytes each: far fewer bytes than the text.
    assert!(page.len() * 2 < raw, "{} of {raw}", page.len());
    round_trip_symbols(&LargeStringArray::from(values.clone()), &training);
    let bytes: Vec<Option<&[u8]>> = values.iter().map(|v| v.as_deref().map(str::as_bytes)).collect();
    round_trip_symbols(&BinaryArray::from(bytes.clone()), &training);
    round_trip_symbols(&LargeBinaryArray::from(bytes.clone()), &training);
    // A slice of an array, and a page of several pieces.
    round_trip_symbols(&utf8.slice(300, 1000), &training);
    let table = SymbolTable::train(&training);
    let pieces = [utf8.slice(0, 100).to_data(), utf8.slice(1000, 500).to_data()];
    let mut page = Vec::new();
    encode_symbol_page(&DataType::Utf8, &pieces, &table, &mut page).unwrap();
    let joined = arrow_select::concat::concat(&[&utf8.slice(0, 100), &utf8.slice(1000, 500)]).unwrap();
    check_decodes(joined.as_ref(), &page);
    // Symbol tables are for strings only.
    let ints = Int32Array::from(vec![1, 2, 3]);
    assert!(encode_symbol_page(&DataType::Int32, &[ints.to_data()], &table, &mut Vec::new()).is_err());
}

#[test]
fn values_a_table_has_no_symbols_for_are_escaped() {
    use arrow_array::BinaryArray;
    // Trained on letters; the values are every byte value, all escaped but the letters.
    let all: Vec<u8> = (0..=255u8).collect();
    let values: Vec<&[u8]> = all.chunks(7).collect();
    round_trip_symbols(&BinaryArray::from(values.clone()), &[b"abcabcabc".as_slice()]);
    // An empty table (trained on nothing) escapes every byte.
    round_trip_symbols(&BinaryArray::from(values), &[]);
    // All values empty: no codes at all.
    round_trip_symbols(&StringArray::from(vec![""; 100]), &[b"abc".as_slice()]);
}

/// A `Utf8` symbol page of strings of `lengths` whose data is `total` bytes, with a table of
/// symbols of `lens` (their bytes `symbols`) and `codes`.
fn symbol_page(lengths: &[usize], total: u64, lens: &[u8], symbols: &[u8], codes: &[u8]) -> Vec<u8> {
    let mut page = vec![validity::VALID, encoding::SYMBOLS, encoding::PLAIN];
    let raw: Vec<u8> = lengths.iter().flat_map(|&l| (l as u32).to_le_bytes()).collect();
    push_shuffled(4, &raw, &mut page);
    page.extend_from_slice(&total.to_le_bytes());
    page.push(lens.len() as u8);
    page.extend_from_slice(lens);
    page.extend_from_slice(symbols);
    page.extend_from_slice(&(codes.len() as u64).to_le_bytes());
    page.extend_from_slice(codes);
    page
}

#[test]
fn hostile_symbol_pages_are_errors() {
    // Two symbols, "ab" and "c": "abc" + "ab" is codes 0 1 0.
    let good = symbol_page(&[3, 2], 5, &[2, 1], b"abc", &[0, 1, 0]);
    let back = decode_page(&DataType::Utf8, 2, &good).unwrap();
    assert_eq!(
        arrow_array::make_array(back).as_ref(),
        &StringArray::from(vec!["abc", "ab"]) as &dyn Array
    );
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            symbol_page(&[3, 2], 5, &[2, 0], b"ab", &[0, 1, 0]),
            "a symbol of 0 bytes",
        ),
        (
            symbol_page(&[3, 2], 5, &[2, 9], b"abcdefghijk", &[0, 1, 0]),
            "a symbol of 9 bytes",
        ),
        // Symbols shorter than their lengths: the codes' length is misread.
        (
            symbol_page(&[3, 2], 5, &[2, 1], b"ab", &[0, 1, 0]),
            "cannot stand for 5 bytes",
        ),
        (symbol_page(&[3, 2], 5, &[2, 1], b"abc", &[0, 7, 0]), "names no symbol"),
        (
            symbol_page(&[3, 2], 5, &[2, 1], b"abc", &[0, 1, 255]),
            "end in an escape",
        ),
        (
            symbol_page(&[3, 2], 5, &[2, 1], b"abc", &[0, 1]),
            "stand for 3 bytes, not 5",
        ),
        (
            symbol_page(&[3, 2], 5, &[2, 1], b"abc", &[0, 1, 0, 0]),
            "stand for 7 bytes, not 5",
        ),
        (symbol_page(&[3, 2], 5, &[2, 1], b"abc", &[0; 100]), "more than 5 bytes"),
        // (Views decode the data before they cut it by the lengths.)
        (
            symbol_page(&[3, 2], 6, &[2, 1], b"abc", &[0, 1, 0]),
            "do not add up|not 6",
        ),
        // Lengths claiming far more than the codes can stand for: an error before any
        // allocation of that size.
        (
            symbol_page(
                &[i32::MAX as usize - 10, 5],
                i32::MAX as u64 - 5,
                &[2, 1],
                b"abc",
                &[0, 1, 0],
            ),
            "cannot stand for",
        ),
    ];
    for (page, want) in cases {
        for layout in [StringLayout::AsStored, StringLayout::Large, StringLayout::View] {
            let err = decode_page_rows_as(&DataType::Utf8, layout, 2, &page, 0..2).unwrap_err();
            assert!(err.is_corruption(), "{err}");
            let found = want.split('|').any(|w| err.to_string().contains(w));
            assert!(found, "{layout:?}: {err} (wanted {want:?})");
        }
    }
    // Codes that stand for bytes which are not UTF-8, in a Utf8 column.
    let page = symbol_page(&[2], 2, &[2], &[0xc3, 0x28], &[0]);
    assert!(decode_page(&DataType::Utf8, 1, &page).unwrap_err().is_corruption());
    assert!(decode_page_rows_as(&DataType::Utf8, StringLayout::View, 1, &page, 0..1)
        .unwrap_err()
        .is_corruption());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Any byte strings coded with a table trained on any other byte strings read back.
    #[test]
    fn symbol_pages_round_trip(
        values in proptest::collection::vec(proptest::option::weighted(0.9, proptest::collection::vec(proptest::num::u8::ANY, 0..40)), 1..300),
        training in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..40), 0..50),
        texts in proptest::collection::vec("(https://|www\\.|[a-z]{1,6}|/|\\.com|é){0,8}", 1..300),
    ) {
        use arrow_array::BinaryArray;
        let training: Vec<&[u8]> = training.iter().map(Vec::as_slice).collect();
        round_trip_symbols(&BinaryArray::from(values.iter().map(|v| v.as_deref()).collect::<Vec<_>>()), &training);
        let text_training: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
        round_trip_symbols(&StringArray::from(texts.clone()), &text_training);
    }
}

// Issue 52: every buffer a read makes is counted against the read's budget before it is
// allocated, whatever the page claims.

/// A nested page of `n` 4- or 8-byte integers, all `value`: one run (what a hostile page uses
/// to claim many rows, or a huge length, in a few bytes).
fn one_run(w: usize, value: u64, n: u64) -> Vec<u8> {
    let mut p = vec![encoding::RUNS];
    p.extend_from_slice(&1u32.to_le_bytes());
    p.extend_from_slice(&value.to_le_bytes()[..w]);
    let bits = (64 - (n - 1).leading_zeros()) as u8;
    p.push(bits);
    crate::bits::pack(std::iter::once(n - 1), bits as usize, &mut p);
    p
}

/// Decodes `page` (rows `0..n` of type `dt`, read as `strings`) within a read budget of
/// `limit` bytes: the result, and the bytes the budget was charged.
fn decode_within(
    dt: &DataType,
    strings: StringLayout,
    n: usize,
    page: &[u8],
    limit: u64,
) -> (kompakt::Result<arrow_data::ArrayData>, u64) {
    let budget = crate::budget::Budget::new(limit);
    let out = decode_page_rows_within(dt, strings, n, page, 0..n, None, &budget);
    (out, limit - budget.left())
}

fn assert_over_limit(r: kompakt::Result<arrow_data::ArrayData>, why: &str) {
    let e = r.expect_err(why);
    assert!(crate::is_over_limit(&e), "{why}: {e}");
}

#[test]
fn a_tiny_page_claiming_gigabytes_of_strings_is_refused_before_allocating() {
    // 64 KiB strings in the column's dictionary, 32768 rows of code 0 as one run: 2 GiB of
    // large strings from a page of a few bytes.
    let value = "x".repeat(64 << 10);
    let values = arrow_array::LargeStringArray::from(vec![value.as_str()]);
    let dict = ColumnDict::new(&values.to_data()).unwrap();
    let mut page = vec![validity::VALID, encoding::COLUMN_DICT];
    page.extend(one_run(4, 0, 32_768));
    assert!(page.len() < 20);
    for strings in [StringLayout::AsStored, StringLayout::Large] {
        let budget = crate::budget::Budget::new(64 << 20);
        let t = std::time::Instant::now();
        let r = decode_page_rows_within(
            &DataType::LargeUtf8,
            strings,
            32_768,
            &page,
            0..32_768,
            Some(&dict),
            &budget,
        );
        assert_over_limit(r, "2 GiB of strings");
        assert!(t.elapsed().as_millis() < 500);
        assert_eq!(budget.left(), (64 << 20) - 32_768 * 4, "only the codes were made");
    }
    // Within a large enough budget a small version decodes, and is charged what it made.
    let mut small = vec![validity::VALID, encoding::COLUMN_DICT];
    small.extend(one_run(4, 0, 16));
    let budget = crate::budget::Budget::new(1 << 30);
    let out = decode_page_rows_within(
        &DataType::LargeUtf8,
        StringLayout::AsStored,
        16,
        &small,
        0..16,
        Some(&dict),
        &budget,
    )
    .unwrap();
    assert_eq!(out.len(), 16);
    assert!((1 << 30) - budget.left() >= 16 * (64 << 10));
}

#[test]
fn string_data_copied_from_a_page_counts_against_the_read() {
    // 2 MB strings, repeated (a dictionary page) and distinct (plain or symbols): 16 MB each.
    let big = "y".repeat(2_000_000);
    let repeated = StringArray::from(vec![big.as_str(); 8]);
    let distinct = StringArray::from_iter_values((0..8).map(|i| format!("{i}{}", &big[1..])));
    for arr in [&repeated, &distinct] {
        let mut page = Vec::new();
        encode_page(
            arr.data_type(),
            &[arr.to_data()],
            &mut page,
            Some(kompakt::Codec::Zstd { level: 2 }),
        )
        .unwrap();
        for strings in [StringLayout::AsStored, StringLayout::Large, StringLayout::View] {
            let (r, _) = decode_within(&DataType::Utf8, strings, 8, &page, 8 << 20);
            assert_over_limit(r, "16 MB of strings in 8 MB");
            let (r, charged) = decode_within(&DataType::Utf8, strings, 8, &page, 64 << 20);
            let back = arrow_array::make_array(r.unwrap());
            assert_eq!(back.len(), 8);
            assert!(charged >= 16_000_000, "{strings:?}: charged {charged}");
        }
    }
}

#[test]
fn symbol_pages_are_charged_what_they_expand_to() {
    // One 8-byte symbol; 1 M codes stand for 8 MB, in 1 MB of page.
    let codes = vec![0u8; 1 << 20];
    let page = symbol_page(&[8 << 20], 8 << 20, &[8], b"abcdefgh", &codes);
    let (r, charged) = decode_within(&DataType::Utf8, StringLayout::AsStored, 1, &page, 4 << 20);
    assert_over_limit(r, "8 MB of symbols in 4 MB");
    assert!(charged < 1 << 10, "refused before expanding: {charged}");
    let (r, charged) = decode_within(&DataType::Utf8, StringLayout::View, 1, &page, 16 << 20);
    assert_eq!(r.unwrap().len(), 1);
    assert!(charged >= 8 << 20);
}

#[test]
fn list_children_count_against_the_read_at_every_level() {
    use arrow_schema::Field;
    use std::sync::Arc;
    // One list of 2^27 int64 zeros (1 GiB) from a few bytes: lengths and values as runs.
    let int_list = DataType::List(Arc::new(Field::new("item", DataType::Int64, true)));
    let mut page = vec![validity::VALID];
    page.extend(one_run(4, 1 << 27, 1));
    page.push(validity::VALID);
    page.extend(one_run(8, 0, 1 << 27));
    let t = std::time::Instant::now();
    let (r, charged) = decode_within(&int_list, StringLayout::AsStored, 1, &page, 64 << 20);
    assert_over_limit(r, "1 GiB of list children");
    assert!(charged < 1 << 10 && t.elapsed().as_millis() < 500);
    // Lists of lists: 2^14 lists of 2^14 lists of 8 strings, each level a run.
    let strings = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    let nested = DataType::List(Arc::new(Field::new("item", strings, true)));
    let mut page = vec![validity::VALID];
    page.extend(one_run(4, 1 << 14, 1 << 14));
    page.push(validity::VALID);
    page.extend(one_run(4, 8, 1 << 28));
    let (r, charged) = decode_within(&nested, StringLayout::AsStored, 1 << 14, &page, 256 << 20);
    assert_over_limit(r, "2^28 inner lists");
    assert!(charged <= 256 << 20);
    // A struct's fields share the budget.
    let pair = DataType::Struct(
        vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Int64, false),
        ]
        .into(),
    );
    let mut page = vec![validity::VALID, validity::VALID];
    page.extend(one_run(8, 1, 1 << 20));
    page.push(validity::VALID);
    page.extend(one_run(8, 2, 1 << 20));
    let (r, _) = decode_within(&pair, StringLayout::AsStored, 1 << 20, &page, 12 << 20);
    assert_over_limit(r, "two 8 MiB fields in 12 MiB");
    let (r, charged) = decode_within(&pair, StringLayout::AsStored, 1 << 20, &page, 16 << 20);
    assert_eq!(r.unwrap().len(), 1 << 20);
    assert_eq!(charged, 16 << 20);
}

#[test]
fn run_pages_that_expand_past_the_budget_are_refused_before_the_work() {
    // 2^28 rows of one int64 run: 2 GiB, refused at once rather than filled.
    let page = [vec![validity::VALID], one_run(8, 7, 1 << 28)].concat();
    let t = std::time::Instant::now();
    let (r, charged) = decode_within(&DataType::Int64, StringLayout::AsStored, 1 << 28, &page, 1 << 30);
    assert_over_limit(r, "2 GiB of runs");
    assert_eq!(charged, 0);
    assert!(t.elapsed().as_millis() < 200, "{:?}", t.elapsed());
    // The same into a caller's buffer: its validity and values are within the read.
    let budget = crate::budget::Budget::new(0);
    let mut dst = vec![0u8; 8 * 1000];
    let bits = decode_page_into_within(&DataType::Int64, 1 << 28, &page, 0..1000, &mut dst, None, &budget).unwrap();
    assert!(bits.validity.is_none() && dst.chunks(8).all(|v| v == 7i64.to_le_bytes()));
    let nulls = [vec![validity::BITMAP], vec![0xff; 1 << 12], one_run(8, 7, 1 << 15)].concat();
    let r = decode_page_into_within(&DataType::Int64, 1 << 15, &nulls, 0..1000, &mut dst, None, &budget);
    assert!(crate::is_over_limit(&r.unwrap_err()));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever a page holds, decoding it within a budget either fits (and is charged at least
    /// its buffers' bytes) or fails: it never charges more than the budget.
    #[test]
    fn a_read_budget_is_never_exceeded(
        values in proptest::collection::vec(proptest::option::weighted(0.8, "[a-c]{0,30}"), 1..200),
        limit in 0u64..20_000,
    ) {
        let arr = StringArray::from(values.clone());
        let mut page = Vec::new();
        encode_page(arr.data_type(), &[arr.to_data()], &mut page, None).unwrap();
        for strings in [StringLayout::AsStored, StringLayout::Large, StringLayout::View] {
            let (r, charged) = decode_within(&DataType::Utf8, strings, arr.len(), &page, limit);
            proptest::prop_assert!(charged <= limit);
            match r {
                Ok(data) => proptest::prop_assert!(charged as usize >= data.buffers().iter().map(|b| b.len()).sum::<usize>()),
                Err(e) => proptest::prop_assert!(crate::is_over_limit(&e), "{}", e),
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Pages of a few hundred distinct numbers, whatever their dictionary became (values plain,
    /// unshuffled or a nested page, table layout 9; codes bytes or packed, layout 8 and 9),
    /// read back bit for bit: whole, in windows, and every truncation is an error.
    #[test]
    fn few_distinct_numbers_round_trip_with_any_codes(
        values in proptest::collection::vec(proptest::prelude::any::<f64>(), 1..=700),
        picks in proptest::collection::vec((proptest::prelude::any::<u64>(), proptest::bool::weighted(0.95)), 256..3000),
        skew in 0u32..4,
        decimals in proptest::bool::ANY,
    ) {
        // Decimals of two places (a nested page of codes), or any bits.
        let values: Vec<f64> = match decimals {
            true => values.iter().map(|v| (v.to_bits() % 100_000) as f64 / 100.0).collect(),
            false => values,
        };
        // `skew` squeezes the picks towards the first values, lowering the codes' entropy.
        let pick = |p: u64| ((p % values.len() as u64) >> skew) as usize;
        let rows = Float64Array::from_iter(picks.iter().map(|&(p, ok)| ok.then_some(values[pick(p)])));
        let bits = |a: &dyn Array| float_bits(a);
        let mut page = Vec::new();
        let data = rows.to_data();
        let enc = encode_page(&DataType::Float64, std::slice::from_ref(&data), &mut page, Some(kompakt::Codec::Zstd { level: 2 })).unwrap();
        proptest::prop_assert!(enc.layout <= crate::meta::LAYOUT);
        let n = rows.len();
        let back = arrow_array::make_array(decode_page(&DataType::Float64, n, &page).unwrap());
        proptest::prop_assert_eq!(bits(back.as_ref()), bits(&rows));
        for (a, b) in [(0, n / 3), (n / 3, n), (n / 2, n / 2 + 1), (n - 1, n)] {
            let part = arrow_array::make_array(decode_page_rows(&DataType::Float64, n, &page, a..b).unwrap());
            proptest::prop_assert_eq!(bits(part.as_ref()), bits(&rows.slice(a, b - a)));
        }
        for cut in [page.len() - 1, page.len() / 2, 7] {
            proptest::prop_assert!(decode_page(&DataType::Float64, n, &page[..cut.min(page.len() - 1)]).is_err());
        }
    }

    /// Any numbers coded against any dictionary holding them (table layout 6) read back: whole
    /// pages, windows, and windows straight into a caller's buffer.
    #[test]
    fn numeric_column_dictionary_pages_round_trip(
        values in proptest::collection::vec(proptest::prelude::any::<f64>(), 1..300),
        picks in proptest::collection::vec((0usize..100_000, proptest::bool::weighted(0.9)), 1..3000),
        window in (0usize..3000, 0usize..3000),
    ) {
        let dict = ColumnDict::new(&Float64Array::from(values.clone()).to_data()).unwrap();
        let codes: Vec<u32> = picks.iter().map(|&(p, _)| (p % values.len()) as u32).collect();
        let rows = Float64Array::from_iter(picks.iter().zip(&codes).map(|(&(_, ok), &c)| ok.then_some(values[c as usize])));
        let mut page = Vec::new();
        let (encoded, _) = encode_coded_values(&DataType::Float64, &[rows.to_data()], &codes, &mut page, Some(kompakt::Codec::Zstd { level: 1 }), None).unwrap();
        // 8 when the codes themselves are a page dictionary's packed codes, 9 a nested one.
        proptest::prop_assert!(matches!(encoded.layout, 6 | 8 | 9), "layout {}", encoded.layout);
        let n = rows.len();
        let (a, b) = (window.0 % (n + 1), window.1 % (n + 1));
        let (a, b) = (a.min(b), a.max(b));
        let got = decode_page_rows_with(&DataType::Float64, StringLayout::AsStored, n, &page, a..b, Some(&dict)).unwrap();
        got.validate_full().unwrap();
        // Bits, not floats: NaNs too.
        let bits = |a: &Float64Array| a.iter().map(|v| v.map(f64::to_bits)).collect::<Vec<_>>();
        let got = Float64Array::from(got);
        proptest::prop_assert_eq!(bits(&got), bits(&rows.slice(a, b - a)));
        let mut dst = vec![0u8; 8 * (b - a)];
        let budget = crate::budget::Budget::new(u64::MAX);
        decode_page_into_within(&DataType::Float64, n, &page, a..b, &mut dst, Some(&dict), &budget).unwrap();
        for (k, v) in dst.chunks_exact(8).enumerate() {
            if rows.is_valid(a + k) {
                proptest::prop_assert_eq!(u64::from_le_bytes(v.try_into().unwrap()), rows.value(a + k).to_bits());
            }
        }
    }
}

/// Hostile pages of numbers coded against a column dictionary are errors: codes past the
/// dictionary, a dictionary of the wrong width or of strings, no dictionary, the encoding
/// inside a struct or inside another page of values.
#[test]
fn numeric_column_dictionary_pages_checked() {
    let dict = ColumnDict::new(&Int64Array::from(vec![10, 20, 30]).to_data()).unwrap();
    let page = |codes: &[u32]| {
        let mut page = vec![validity::VALID, encoding::COLUMN_DICT, encoding::PLAIN];
        let bytes: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
        push_shuffled(4, &bytes, &mut page);
        page
    };
    let read = |dt: &DataType, page: &[u8], dict: Option<&ColumnDict>| {
        decode_page_rows_with(dt, StringLayout::AsStored, 4, page, 0..4, dict)
    };
    let good = read(&DataType::Int64, &page(&[2, 0, 1, 2]), Some(&dict)).unwrap();
    assert_eq!(Int64Array::from(good), Int64Array::from(vec![30, 10, 20, 30]));
    let corrupt = |r: kompakt::Result<arrow_data::ArrayData>, what: &str| {
        let err = r.unwrap_err();
        assert!(err.is_corruption(), "{what}: {err}");
    };
    corrupt(
        read(&DataType::Int64, &page(&[0, 3, 1, 2]), Some(&dict)),
        "a code past the dictionary",
    );
    corrupt(read(&DataType::Int64, &page(&[0, 0, 0, 0]), None), "no dictionary");
    corrupt(
        read(&DataType::Int32, &page(&[0, 0, 0, 0]), Some(&dict)),
        "8-byte values for a 4-byte column",
    );
    corrupt(
        read(
            &DataType::Int64,
            &page(&[0, 0, 0, 0]),
            Some(&column_dict(&["a", "b", "c"])),
        ),
        "strings",
    );
    let mut inner = vec![validity::VALID, encoding::SCALED];
    inner.extend_from_slice(&0u64.to_le_bytes());
    inner.extend_from_slice(&4u64.to_le_bytes());
    inner.extend_from_slice(&page(&[0, 0, 0, 0])[1..]);
    corrupt(read(&DataType::Int64, &inner, Some(&dict)), "inside a scaled page");
    let dt = DataType::Struct(vec![arrow_schema::Field::new("x", DataType::Int64, false)].into());
    let mut nested = vec![validity::VALID];
    nested.extend_from_slice(&page(&[0, 0, 0, 0]));
    corrupt(
        decode_page_rows_with(&dt, StringLayout::AsStored, 4, &nested, 0..4, Some(&dict)),
        "inside a struct",
    );
    // A window reads only its rows' codes, and checks them.
    let window = decode_page_rows_with(
        &DataType::Int64,
        StringLayout::AsStored,
        4,
        &page(&[2, 0, 1, 2]),
        1..3,
        Some(&dict),
    );
    assert_eq!(Int64Array::from(window.unwrap()), Int64Array::from(vec![10, 20]));
}

/// Pages with one null in 8 rows or more store their valid rows' values only (table layout 7),
/// read back whole, by windows and straight into a buffer; fewer nulls keep a value a row.
#[test]
fn valid_rows_only_pages() {
    let n = 3000;
    let values = Int64Array::from_iter((0..n).map(|i: i64| (i % 5 < 2).then_some(i * i % 1000 - 300)));
    let mut page = Vec::new();
    let encoded = encode_page(&DataType::Int64, &[values.to_data()], &mut page, None).unwrap();
    assert_eq!(page[0], validity::VALID_ONLY);
    // 9: the values are a nested dictionary (a frame of reference of 1,000 values).
    assert_eq!(encoded.layout, 9);
    for rows in [0..n as usize, 0..1, 1..2, 7..2993, 2999..3000, 1500..1500] {
        let got = decode_page_rows(&DataType::Int64, n as usize, &page, rows.clone()).unwrap();
        got.validate_full().unwrap();
        let want = values.slice(rows.start, rows.len());
        assert_eq!(Int64Array::from(got), want, "{rows:?}");
        let mut dst = vec![0xAAu8; 8 * rows.len()];
        let bits = decode_page_into(&DataType::Int64, n as usize, &page, rows.clone(), &mut dst).unwrap();
        let validity = bits.validity.expect("nulls");
        for (k, v) in dst.chunks_exact(8).enumerate() {
            let valid = arrow_buffer::bit_util::get_bit(validity.as_slice(), k);
            assert_eq!(valid, want.is_valid(k));
            let v = i64::from_le_bytes(v.try_into().unwrap());
            assert_eq!(v, if valid { want.value(k) } else { 0 }, "{rows:?} row {k}");
        }
    }
    // One null in 10: a value a row, as before.
    let sparse = Int32Array::from_iter((0..n).map(|i| (i % 10 != 3).then_some(i as i32)));
    let mut page = Vec::new();
    encode_page(&DataType::Int32, &[sparse.to_data()], &mut page, None).unwrap();
    assert_eq!(page[0], validity::BITMAP);
    // Nested nodes too: a list of floats, a third null.
    let floats = Float64Array::from_iter((0..n).map(|i| (i % 3 != 0).then_some(i as f64 / 7.0)));
    let list = arrow_array::ListArray::new(
        std::sync::Arc::new(arrow_schema::Field::new("item", DataType::Float64, true)),
        arrow_buffer::OffsetBuffer::from_lengths(vec![3; n as usize / 3]),
        std::sync::Arc::new(floats),
        None,
    );
    let mut page = Vec::new();
    let encoded = encode_page(list.data_type(), &[list.to_data()], &mut page, None).unwrap();
    assert_eq!(encoded.layout, 7);
    let got = decode_page(list.data_type(), list.len(), &page).unwrap();
    assert_eq!(arrow_array::make_array(got).as_ref(), &list as &dyn Array);
}

/// Hostile pages of valid rows' values: on a node that is not of fixed-width values, or with
/// values missing or left over, they are errors.
#[test]
fn valid_rows_only_pages_checked() {
    let values = Int32Array::from(vec![Some(1), None, Some(3), None]);
    let mut page = Vec::new();
    encode_page(&DataType::Int32, &[values.to_data()], &mut page, None).unwrap();
    assert_eq!(page[0], validity::VALID_ONLY);
    let got = decode_page(&DataType::Int32, 4, &page).unwrap();
    assert_eq!(Int32Array::from(got), values);
    // The same page with its two values plain, so that a count that lies shows in the bytes.
    let mut page = vec![validity::VALID_ONLY, 0b0101, encoding::PLAIN];
    push_shuffled(4, &[1, 0, 0, 0, 3, 0, 0, 0], &mut page);
    assert_eq!(
        Int32Array::from(decode_page(&DataType::Int32, 4, &page).unwrap()),
        values
    );
    // A bitmap claiming three valid rows: one value short.
    let mut short = page.clone();
    short[1] = 0b0111;
    assert!(decode_page(&DataType::Int32, 4, &short).unwrap_err().is_corruption());
    // One valid row: a value left over.
    let mut over = page.clone();
    over[1] = 0b0001;
    assert!(decode_page(&DataType::Int32, 4, &over).unwrap_err().is_corruption());
    // The same validity on strings and booleans.
    for dt in [DataType::Utf8, DataType::Boolean] {
        let err = decode_page(&dt, 4, &page).unwrap_err();
        assert!(err.is_corruption(), "{dt}: {err}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Pages of any values with many nulls (valid rows' values only) read back whole, by any
    /// window, and straight into a buffer with zeros in the null rows.
    #[test]
    fn valid_rows_only_pages_round_trip(
        rows in proptest::collection::vec((proptest::prelude::any::<i64>(), proptest::bool::weighted(0.5)), 1..3000),
        small in proptest::bool::ANY,
        window in (0usize..3000, 0usize..3000),
    ) {
        let values = Int64Array::from_iter(rows.iter().map(|&(v, ok)| ok.then_some(if small { v % 100 } else { v })));
        let n = values.len();
        let mut page = Vec::new();
        encode_page(&DataType::Int64, &[values.to_data()], &mut page, Some(kompakt::Codec::Zstd { level: 1 })).unwrap();
        let (a, b) = (window.0 % (n + 1), window.1 % (n + 1));
        let (a, b) = (a.min(b), a.max(b));
        let got = decode_page_rows(&DataType::Int64, n, &page, a..b).unwrap();
        got.validate_full().unwrap();
        proptest::prop_assert_eq!(Int64Array::from(got), values.slice(a, b - a));
        let mut dst = vec![0x5Au8; 8 * (b - a)];
        decode_page_into(&DataType::Int64, n, &page, a..b, &mut dst).unwrap();
        for (k, v) in dst.chunks_exact(8).enumerate() {
            let want = if values.is_valid(a + k) { values.value(a + k) } else { 0 };
            proptest::prop_assert_eq!(i64::from_le_bytes(v.try_into().unwrap()), want);
        }
    }
}

/// Working buffers (valid values before they are spread, codes before they are looked up) are
/// checked against a read's limit but not counted as kept: a read whose limit is exactly what
/// it returns fits, however its pages were stored.
#[test]
fn working_buffers_are_not_counted_as_kept() {
    let n: usize = 4000;
    let half_null = Int64Array::from_iter((0..n as i64).map(|i| (i % 2 == 0).then_some(i * 7919 % 100_000)));
    let mut page = Vec::new();
    encode_page(&DataType::Int64, &[half_null.to_data()], &mut page, None).unwrap();
    assert_eq!(page[0], validity::VALID_ONLY);
    let kept = (8 * n + n.div_ceil(8)) as u64;
    let (r, charged) = decode_within(&DataType::Int64, StringLayout::AsStored, n, &page, kept);
    assert_eq!(Int64Array::from(r.unwrap()), half_null);
    assert_eq!(charged, kept);
    // Into a caller's buffer, which the caller counted: the bitmap fits in what is left.
    let budget = crate::budget::Budget::new(kept);
    budget.charge(8 * n as u64, "the caller's buffer").unwrap();
    let mut dst = vec![0u8; 8 * n];
    decode_page_into_within(&DataType::Int64, n, &page, 0..n, &mut dst, None, &budget).unwrap();
    assert_eq!(budget.left(), 0);
    // Numbers coded against a column dictionary: the codes are a working buffer too.
    let dict = ColumnDict::new(&Int64Array::from(vec![5, 6, 7]).to_data()).unwrap();
    let codes: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
    let values = Int64Array::from_iter_values(codes.iter().map(|&c| 5 + c as i64));
    let mut page = Vec::new();
    encode_coded_values(&DataType::Int64, &[values.to_data()], &codes, &mut page, None, None).unwrap();
    let budget = crate::budget::Budget::new(8 * n as u64);
    let got = decode_page_rows_within(
        &DataType::Int64,
        StringLayout::AsStored,
        n,
        &page,
        0..n,
        Some(&dict),
        &budget,
    );
    assert_eq!(Int64Array::from(got.unwrap()), values);
}
