//! Does not compile: the errors sit in a method, a trait default method and
//! a function nested in a module.

pub struct Meter<T> {
    readings: Vec<T>,
}

impl<T: Copy + Into<f64>> Meter<T>
where
    T: PartialOrd,
{
    pub fn mean(&self) -> f64 {
        let sum: f64 = self.readings.iter().map(|r| (*r).into()).sum();
        let n: u32 = self.readings.len();
        sum / n as f64
    }
}

pub trait Gauge {
    fn value(&self) -> f64;

    fn describe(&self) -> String {
        format!("{:.2}", self.valu())
    }
}

pub mod units {
    pub fn convert(v: f64) -> f64 {
        fn factor() -> f64 {
            "2.54"
        }
        v * factor()
    }
}
