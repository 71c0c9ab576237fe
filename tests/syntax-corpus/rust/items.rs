//! Module docs.
use std::fmt;

/// A documented struct with attributes above it.
#[derive(Debug, Clone)]
#[allow(dead_code)]
pub struct Named {
    a: u32,
    b: String,
}

pub(crate) struct Tuple(u32, String);

struct Unit;

pub enum Shape {
    Circle { r: f64 },
    Square(f64),
    Nothing,
}

union Bits {
    int: u32,
    float: f32,
}

impl<T> fmt::Display for a::Wrapper<T>
where
    T: fmt::Display,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Named {
    pub const fn new() -> Self {
        Named { a: 0, b: String::new() }
    }

    #[inline]
    pub async unsafe fn weird(&self) {}

    fn with_closure(&self) -> impl Fn() -> u32 {
        let add = |x: u32| -> u32 {
            fn inside_closure() {}
            x + 1
        };
        move || add(1)
    }
}

impl<'a> From<&'a str> for Box<dyn Trait + 'a> {
    fn from(s: &'a str) -> Self {
        todo_box(s)
    }
}

pub trait Trait {
    fn required(&self);

    fn provided(&self) -> u32 {
        fn helper() -> u32 {
            7
        }
        helper()
    }
}

extern "C" {
    fn external(x: i32) -> i32;
}

mod declared;

pub mod outer {
    pub mod inner {
        pub fn deep() {
            struct LocalStruct {
                x: u8,
            }
            enum LocalEnum {
                A,
            }
            let _ = (LocalStruct { x: 1 }, LocalEnum::A);
        }
    }

    macro_rules! make_fn {
        ($name:ident) => {
            fn $name() {}
        };
    }

    make_fn!(generated);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_works() {
        assert_eq!(2 + 2, 4);
    }

    /// Doc comment on a test helper.
    #[allow(unused)]
    fn helper() {}
}

fn todo_box<'a>(_: &'a str) -> Box<dyn Trait + 'a> {
    unimplemented_box()
}

fn unimplemented_box<'a>() -> Box<dyn Trait + 'a> {
    loop {}
}

impl<T: ?Sized> Trait for &T {
    fn required(&self) {}
}

pub fn generic<T, U>(t: T, u: U) -> (T, U)
where
    T: Clone,
    U: Default,
{
    (t, u)
}

fn one_line() -> u32 { 1 }
