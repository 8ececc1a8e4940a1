//! One declaration per list: a fieldless enum whose variants, `ALL` and
//! per-variant row are written once, so a variant cannot be left out of
//! `ALL` (the Envoy filter's counters and the npm package's code list read
//! it) or given no row.

/// `table_enum! { #[attrs] vis enum Name: Row { Variant => row_expr, ... } }`
/// declares the enum, `Name::ALL` (every variant, in declaration order) and
/// a private `const fn row(self) -> Row`.
macro_rules! table_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $row:ty {
            $( $(#[$variant_meta:meta])* $variant:ident => $value:expr, )*
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$variant_meta])* $variant, )*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [$name; [$($name::$variant),*].len()] = [$($name::$variant),*];

            const fn row(self) -> $row {
                match self {
                    $( $name::$variant => $value, )*
                }
            }
        }
    };
}
