//! Three hundred tests of a tiny parser, three of them failing.
pub fn parse_amount(s: &str) -> u64 {
    let (whole, cents) = s.split_once('.').unwrap_or((s, "0"));
    whole.parse::<u64>().unwrap() * 100 + cents.parse::<u64>().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amount_000() {
        assert_eq!(parse_amount("0.00"), 0);
    }

    #[test]
    fn amount_001() {
        assert_eq!(parse_amount("1.01"), 101);
    }

    #[test]
    fn amount_002() {
        assert_eq!(parse_amount("2.02"), 202);
    }

    #[test]
    fn amount_003() {
        assert_eq!(parse_amount("3.03"), 303);
    }

    #[test]
    fn amount_004() {
        assert_eq!(parse_amount("4.04"), 404);
    }

    #[test]
    fn amount_005() {
        assert_eq!(parse_amount("5.5"), 550);
    }

    #[test]
    fn amount_006() {
        assert_eq!(parse_amount("6.06"), 606);
    }

    #[test]
    fn amount_007() {
        assert_eq!(parse_amount("7.07"), 707);
    }

    #[test]
    fn amount_008() {
        assert_eq!(parse_amount("8.08"), 808);
    }

    #[test]
    fn amount_009() {
        assert_eq!(parse_amount("9.09"), 909);
    }

    #[test]
    fn amount_010() {
        assert_eq!(parse_amount("10.10"), 1010);
    }

    #[test]
    fn amount_011() {
        assert_eq!(parse_amount("11.11"), 1111);
    }

    #[test]
    fn amount_012() {
        assert_eq!(parse_amount("12.12"), 1212);
    }

    #[test]
    fn amount_013() {
        assert_eq!(parse_amount("13.13"), 1313);
    }

    #[test]
    fn amount_014() {
        assert_eq!(parse_amount("14.14"), 1414);
    }

    #[test]
    fn amount_015() {
        assert_eq!(parse_amount("15.15"), 1515);
    }

    #[test]
    fn amount_016() {
        assert_eq!(parse_amount("16.16"), 1616);
    }

    #[test]
    fn amount_017() {
        assert_eq!(parse_amount("17.17"), 1717);
    }

    #[test]
    fn amount_018() {
        assert_eq!(parse_amount("18.18"), 1818);
    }

    #[test]
    fn amount_019() {
        assert_eq!(parse_amount("19.19"), 1919);
    }

    #[test]
    fn amount_020() {
        assert_eq!(parse_amount("20.20"), 2020);
    }

    #[test]
    fn amount_021() {
        assert_eq!(parse_amount("21.21"), 2121);
    }

    #[test]
    fn amount_022() {
        assert_eq!(parse_amount("22.22"), 2222);
    }

    #[test]
    fn amount_023() {
        assert_eq!(parse_amount("23.23"), 2323);
    }

    #[test]
    fn amount_024() {
        assert_eq!(parse_amount("24.24"), 2424);
    }

    #[test]
    fn amount_025() {
        assert_eq!(parse_amount("25.25"), 2525);
    }

    #[test]
    fn amount_026() {
        assert_eq!(parse_amount("26.26"), 2626);
    }

    #[test]
    fn amount_027() {
        assert_eq!(parse_amount("27.27"), 2727);
    }

    #[test]
    fn amount_028() {
        assert_eq!(parse_amount("28.28"), 2828);
    }

    #[test]
    fn amount_029() {
        assert_eq!(parse_amount("29.29"), 2929);
    }

    #[test]
    fn amount_030() {
        assert_eq!(parse_amount("30.30"), 3030);
    }

    #[test]
    fn amount_031() {
        assert_eq!(parse_amount("31.31"), 3131);
    }

    #[test]
    fn amount_032() {
        assert_eq!(parse_amount("32.32"), 3232);
    }

    #[test]
    fn amount_033() {
        assert_eq!(parse_amount("33.33"), 3333);
    }

    #[test]
    fn amount_034() {
        assert_eq!(parse_amount("34.34"), 3434);
    }

    #[test]
    fn amount_035() {
        assert_eq!(parse_amount("35.35"), 3535);
    }

    #[test]
    fn amount_036() {
        assert_eq!(parse_amount("36.36"), 3636);
    }

    #[test]
    fn amount_037() {
        assert_eq!(parse_amount("37.37"), 3737);
    }

    #[test]
    fn amount_038() {
        assert_eq!(parse_amount("38.38"), 3838);
    }

    #[test]
    fn amount_039() {
        assert_eq!(parse_amount("39.39"), 3939);
    }

    #[test]
    fn amount_040() {
        assert_eq!(parse_amount("40.40"), 4040);
    }

    #[test]
    fn amount_041() {
        assert_eq!(parse_amount("41.41"), 4141);
    }

    #[test]
    fn amount_042() {
        assert_eq!(parse_amount("42.42"), 4242);
    }

    #[test]
    fn amount_043() {
        assert_eq!(parse_amount("43.43"), 4343);
    }

    #[test]
    fn amount_044() {
        assert_eq!(parse_amount("44.44"), 4444);
    }

    #[test]
    fn amount_045() {
        assert_eq!(parse_amount("45.45"), 4545);
    }

    #[test]
    fn amount_046() {
        assert_eq!(parse_amount("46.46"), 4646);
    }

    #[test]
    fn amount_047() {
        assert_eq!(parse_amount("47.47"), 4747);
    }

    #[test]
    fn amount_048() {
        assert_eq!(parse_amount("48.48"), 4848);
    }

    #[test]
    fn amount_049() {
        assert_eq!(parse_amount("49.49"), 4949);
    }

    #[test]
    fn amount_050() {
        assert_eq!(parse_amount("50.50"), 5050);
    }

    #[test]
    fn amount_051() {
        assert_eq!(parse_amount("51.51"), 5151);
    }

    #[test]
    fn amount_052() {
        assert_eq!(parse_amount("52.52"), 5252);
    }

    #[test]
    fn amount_053() {
        assert_eq!(parse_amount("53.53"), 5353);
    }

    #[test]
    fn amount_054() {
        assert_eq!(parse_amount("54.54"), 5454);
    }

    #[test]
    fn amount_055() {
        assert_eq!(parse_amount("55.55"), 5555);
    }

    #[test]
    fn amount_056() {
        assert_eq!(parse_amount("56.56"), 5656);
    }

    #[test]
    fn amount_057() {
        assert_eq!(parse_amount("57.57"), 5757);
    }

    #[test]
    fn amount_058() {
        assert_eq!(parse_amount("58.58"), 5858);
    }

    #[test]
    fn amount_059() {
        assert_eq!(parse_amount("59.59"), 5959);
    }

    #[test]
    fn amount_060() {
        assert_eq!(parse_amount("60.60"), 6060);
    }

    #[test]
    fn amount_061() {
        assert_eq!(parse_amount("61.61"), 6161);
    }

    #[test]
    fn amount_062() {
        assert_eq!(parse_amount("62.62"), 6262);
    }

    #[test]
    fn amount_063() {
        assert_eq!(parse_amount("63.63"), 6363);
    }

    #[test]
    fn amount_064() {
        assert_eq!(parse_amount("64.64"), 6464);
    }

    #[test]
    fn amount_065() {
        assert_eq!(parse_amount("65.65"), 6565);
    }

    #[test]
    fn amount_066() {
        assert_eq!(parse_amount("66.66"), 6666);
    }

    #[test]
    fn amount_067() {
        assert_eq!(parse_amount("67.67"), 6767);
    }

    #[test]
    fn amount_068() {
        assert_eq!(parse_amount("68.68"), 6868);
    }

    #[test]
    fn amount_069() {
        assert_eq!(parse_amount("69.69"), 6969);
    }

    #[test]
    fn amount_070() {
        assert_eq!(parse_amount("70.70"), 7070);
    }

    #[test]
    fn amount_071() {
        assert_eq!(parse_amount("71.71"), 7171);
    }

    #[test]
    fn amount_072() {
        assert_eq!(parse_amount("72.72"), 7272);
    }

    #[test]
    fn amount_073() {
        assert_eq!(parse_amount("73.73"), 7373);
    }

    #[test]
    fn amount_074() {
        assert_eq!(parse_amount("74.74"), 7474);
    }

    #[test]
    fn amount_075() {
        assert_eq!(parse_amount("75.75"), 7575);
    }

    #[test]
    fn amount_076() {
        assert_eq!(parse_amount("76.76"), 7676);
    }

    #[test]
    fn amount_077() {
        assert_eq!(parse_amount("77.77"), 7777);
    }

    #[test]
    fn amount_078() {
        assert_eq!(parse_amount("78.78"), 7878);
    }

    #[test]
    fn amount_079() {
        assert_eq!(parse_amount("79.79"), 7979);
    }

    #[test]
    fn amount_080() {
        assert_eq!(parse_amount("80.80"), 8080);
    }

    #[test]
    fn amount_081() {
        assert_eq!(parse_amount("81.81"), 8181);
    }

    #[test]
    fn amount_082() {
        assert_eq!(parse_amount("82.82"), 8282);
    }

    #[test]
    fn amount_083() {
        assert_eq!(parse_amount("83.83"), 8383);
    }

    #[test]
    fn amount_084() {
        assert_eq!(parse_amount("84.84"), 8484);
    }

    #[test]
    fn amount_085() {
        assert_eq!(parse_amount("85.85"), 8585);
    }

    #[test]
    fn amount_086() {
        assert_eq!(parse_amount("86.86"), 8686);
    }

    #[test]
    fn amount_087() {
        assert_eq!(parse_amount("87.87"), 8787);
    }

    #[test]
    fn amount_088() {
        assert_eq!(parse_amount("88.88"), 8888);
    }

    #[test]
    fn amount_089() {
        assert_eq!(parse_amount("89.89"), 8989);
    }

    #[test]
    fn amount_090() {
        assert_eq!(parse_amount("90.90"), 9090);
    }

    #[test]
    fn amount_091() {
        assert_eq!(parse_amount("91.91"), 9191);
    }

    #[test]
    fn amount_092() {
        assert_eq!(parse_amount("92.92"), 9292);
    }

    #[test]
    fn amount_093() {
        assert_eq!(parse_amount("93.93"), 9393);
    }

    #[test]
    fn amount_094() {
        assert_eq!(parse_amount("94.94"), 9494);
    }

    #[test]
    fn amount_095() {
        assert_eq!(parse_amount("95.95"), 9595);
    }

    #[test]
    fn amount_096() {
        assert_eq!(parse_amount("96.96"), 9696);
    }

    #[test]
    fn amount_097() {
        assert_eq!(parse_amount("97.97"), 9797);
    }

    #[test]
    fn amount_098() {
        assert_eq!(parse_amount("98.98"), 9898);
    }

    #[test]
    fn amount_099() {
        assert_eq!(parse_amount("99.99"), 9999);
    }

    #[test]
    fn amount_100() {
        assert_eq!(parse_amount("100.00"), 10000);
    }

    #[test]
    fn amount_101() {
        assert_eq!(parse_amount("101.01"), 10101);
    }

    #[test]
    fn amount_102() {
        assert_eq!(parse_amount("102.02"), 10202);
    }

    #[test]
    fn amount_103() {
        assert_eq!(parse_amount("103.03"), 10303);
    }

    #[test]
    fn amount_104() {
        assert_eq!(parse_amount("104.04"), 10404);
    }

    #[test]
    fn amount_105() {
        assert_eq!(parse_amount("105.05"), 10505);
    }

    #[test]
    fn amount_106() {
        assert_eq!(parse_amount("106.06"), 10606);
    }

    #[test]
    fn amount_107() {
        assert_eq!(parse_amount("107.07"), 10707);
    }

    #[test]
    fn amount_108() {
        assert_eq!(parse_amount("108.08"), 10808);
    }

    #[test]
    fn amount_109() {
        assert_eq!(parse_amount("109.09"), 10909);
    }

    #[test]
    fn amount_110() {
        assert_eq!(parse_amount("110.10"), 11010);
    }

    #[test]
    fn amount_111() {
        assert_eq!(parse_amount("111.11"), 11111);
    }

    #[test]
    fn amount_112() {
        assert_eq!(parse_amount("112.12"), 11212);
    }

    #[test]
    fn amount_113() {
        assert_eq!(parse_amount("113.13"), 11313);
    }

    #[test]
    fn amount_114() {
        assert_eq!(parse_amount("114.14"), 11414);
    }

    #[test]
    fn amount_115() {
        assert_eq!(parse_amount("115.15"), 11515);
    }

    #[test]
    fn amount_116() {
        assert_eq!(parse_amount("116.16"), 11616);
    }

    #[test]
    fn amount_117() {
        assert_eq!(parse_amount("117.17"), 11717);
    }

    #[test]
    fn amount_118() {
        assert_eq!(parse_amount("118.18"), 11818);
    }

    #[test]
    fn amount_119() {
        assert_eq!(parse_amount("119.19"), 11919);
    }

    #[test]
    fn amount_120() {
        assert_eq!(parse_amount("120.20"), 12020);
    }

    #[test]
    fn amount_121() {
        assert_eq!(parse_amount("121.21"), 12121);
    }

    #[test]
    fn amount_122() {
        assert_eq!(parse_amount("122.22"), 12222);
    }

    #[test]
    fn amount_123() {
        assert_eq!(parse_amount("123.23"), 12323);
    }

    #[test]
    fn amount_124() {
        assert_eq!(parse_amount("124.24"), 12424);
    }

    #[test]
    fn amount_125() {
        assert_eq!(parse_amount("125.25"), 12525);
    }

    #[test]
    fn amount_126() {
        assert_eq!(parse_amount("126.26"), 12626);
    }

    #[test]
    fn amount_127() {
        assert_eq!(parse_amount("127.27"), 12727);
    }

    #[test]
    fn amount_128() {
        assert_eq!(parse_amount("128.28"), 12828);
    }

    #[test]
    fn amount_129() {
        assert_eq!(parse_amount("129.29"), 12929);
    }

    #[test]
    fn amount_130() {
        assert_eq!(parse_amount("130.30"), 13030);
    }

    #[test]
    fn amount_131() {
        assert_eq!(parse_amount("131.31"), 13131);
    }

    #[test]
    fn amount_132() {
        assert_eq!(parse_amount("132.32"), 13232);
    }

    #[test]
    fn amount_133() {
        assert_eq!(parse_amount("133.33"), 13333);
    }

    #[test]
    fn amount_134() {
        assert_eq!(parse_amount("134.34"), 13434);
    }

    #[test]
    fn amount_135() {
        assert_eq!(parse_amount("135.35"), 13535);
    }

    #[test]
    fn amount_136() {
        assert_eq!(parse_amount("136.36"), 13636);
    }

    #[test]
    fn amount_137() {
        assert_eq!(parse_amount("137.37"), 13737);
    }

    #[test]
    fn amount_138() {
        assert_eq!(parse_amount("138.38"), 13838);
    }

    #[test]
    fn amount_139() {
        assert_eq!(parse_amount("139.39"), 13939);
    }

    #[test]
    fn amount_140() {
        assert_eq!(parse_amount("140.40"), 14040);
    }

    #[test]
    fn amount_141() {
        assert_eq!(parse_amount("141.41"), 14141);
    }

    #[test]
    fn amount_142() {
        assert_eq!(parse_amount("142.42"), 14242);
    }

    #[test]
    fn amount_143() {
        assert_eq!(parse_amount("143.43"), 14343);
    }

    #[test]
    fn amount_144() {
        assert_eq!(parse_amount("144.44"), 14444);
    }

    #[test]
    fn amount_145() {
        assert_eq!(parse_amount("145.45"), 14545);
    }

    #[test]
    fn amount_146() {
        assert_eq!(parse_amount("146.46"), 14646);
    }

    #[test]
    fn amount_147() {
        assert_eq!(parse_amount("147.47"), 14747);
    }

    #[test]
    fn amount_148() {
        assert_eq!(parse_amount("148.48"), 14848);
    }

    #[test]
    fn amount_149() {
        assert_eq!(parse_amount("149.49"), 14949);
    }

    #[test]
    fn amount_150() {
        assert_eq!(parse_amount("150.0"), 15000);
    }

    #[test]
    fn amount_151() {
        assert_eq!(parse_amount("151.51"), 15151);
    }

    #[test]
    fn amount_152() {
        assert_eq!(parse_amount("152.52"), 15252);
    }

    #[test]
    fn amount_153() {
        assert_eq!(parse_amount("153.53"), 15353);
    }

    #[test]
    fn amount_154() {
        assert_eq!(parse_amount("154.54"), 15454);
    }

    #[test]
    fn amount_155() {
        assert_eq!(parse_amount("155.55"), 15555);
    }

    #[test]
    fn amount_156() {
        assert_eq!(parse_amount("156.56"), 15656);
    }

    #[test]
    fn amount_157() {
        assert_eq!(parse_amount("157.57"), 15757);
    }

    #[test]
    fn amount_158() {
        assert_eq!(parse_amount("158.58"), 15858);
    }

    #[test]
    fn amount_159() {
        assert_eq!(parse_amount("159.59"), 15959);
    }

    #[test]
    fn amount_160() {
        assert_eq!(parse_amount("160.60"), 16060);
    }

    #[test]
    fn amount_161() {
        assert_eq!(parse_amount("161.61"), 16161);
    }

    #[test]
    fn amount_162() {
        assert_eq!(parse_amount("162.62"), 16262);
    }

    #[test]
    fn amount_163() {
        assert_eq!(parse_amount("163.63"), 16363);
    }

    #[test]
    fn amount_164() {
        assert_eq!(parse_amount("164.64"), 16464);
    }

    #[test]
    fn amount_165() {
        assert_eq!(parse_amount("165.65"), 16565);
    }

    #[test]
    fn amount_166() {
        assert_eq!(parse_amount("166.66"), 16666);
    }

    #[test]
    fn amount_167() {
        assert_eq!(parse_amount("167.67"), 16767);
    }

    #[test]
    fn amount_168() {
        assert_eq!(parse_amount("168.68"), 16868);
    }

    #[test]
    fn amount_169() {
        assert_eq!(parse_amount("169.69"), 16969);
    }

    #[test]
    fn amount_170() {
        assert_eq!(parse_amount("170.70"), 17070);
    }

    #[test]
    fn amount_171() {
        assert_eq!(parse_amount("171.71"), 17171);
    }

    #[test]
    fn amount_172() {
        assert_eq!(parse_amount("172.72"), 17272);
    }

    #[test]
    fn amount_173() {
        assert_eq!(parse_amount("173.73"), 17373);
    }

    #[test]
    fn amount_174() {
        assert_eq!(parse_amount("174.74"), 17474);
    }

    #[test]
    fn amount_175() {
        assert_eq!(parse_amount("175.75"), 17575);
    }

    #[test]
    fn amount_176() {
        assert_eq!(parse_amount("176.76"), 17676);
    }

    #[test]
    fn amount_177() {
        assert_eq!(parse_amount("177.77"), 17777);
    }

    #[test]
    fn amount_178() {
        assert_eq!(parse_amount("178.78"), 17878);
    }

    #[test]
    fn amount_179() {
        assert_eq!(parse_amount("179.79"), 17979);
    }

    #[test]
    fn amount_180() {
        assert_eq!(parse_amount("180.80"), 18080);
    }

    #[test]
    fn amount_181() {
        assert_eq!(parse_amount("181.81"), 18181);
    }

    #[test]
    fn amount_182() {
        assert_eq!(parse_amount("182.82"), 18282);
    }

    #[test]
    fn amount_183() {
        assert_eq!(parse_amount("183.83"), 18383);
    }

    #[test]
    fn amount_184() {
        assert_eq!(parse_amount("184.84"), 18484);
    }

    #[test]
    fn amount_185() {
        assert_eq!(parse_amount("185.85"), 18585);
    }

    #[test]
    fn amount_186() {
        assert_eq!(parse_amount("186.86"), 18686);
    }

    #[test]
    fn amount_187() {
        assert_eq!(parse_amount("187.87"), 18787);
    }

    #[test]
    fn amount_188() {
        assert_eq!(parse_amount("188.88"), 18888);
    }

    #[test]
    fn amount_189() {
        assert_eq!(parse_amount("189.89"), 18989);
    }

    #[test]
    fn amount_190() {
        assert_eq!(parse_amount("190.90"), 19090);
    }

    #[test]
    fn amount_191() {
        assert_eq!(parse_amount("191.91"), 19191);
    }

    #[test]
    fn amount_192() {
        assert_eq!(parse_amount("192.92"), 19292);
    }

    #[test]
    fn amount_193() {
        assert_eq!(parse_amount("193.93"), 19393);
    }

    #[test]
    fn amount_194() {
        assert_eq!(parse_amount("194.94"), 19494);
    }

    #[test]
    fn amount_195() {
        assert_eq!(parse_amount("195.95"), 19595);
    }

    #[test]
    fn amount_196() {
        assert_eq!(parse_amount("196.96"), 19696);
    }

    #[test]
    fn amount_197() {
        assert_eq!(parse_amount("197.97"), 19797);
    }

    #[test]
    fn amount_198() {
        assert_eq!(parse_amount("198.98"), 19898);
    }

    #[test]
    fn amount_199() {
        assert_eq!(parse_amount("199.99"), 19999);
    }

    #[test]
    fn amount_200() {
        assert_eq!(parse_amount("200.00"), 20000);
    }

    #[test]
    fn amount_201() {
        assert_eq!(parse_amount("201.01"), 20101);
    }

    #[test]
    fn amount_202() {
        assert_eq!(parse_amount("202.02"), 20202);
    }

    #[test]
    fn amount_203() {
        assert_eq!(parse_amount("203.03"), 20303);
    }

    #[test]
    fn amount_204() {
        assert_eq!(parse_amount("204.04"), 20404);
    }

    #[test]
    fn amount_205() {
        assert_eq!(parse_amount("205.05"), 20505);
    }

    #[test]
    fn amount_206() {
        assert_eq!(parse_amount("206.06"), 20606);
    }

    #[test]
    fn amount_207() {
        assert_eq!(parse_amount("207.07"), 20707);
    }

    #[test]
    fn amount_208() {
        assert_eq!(parse_amount("208.08"), 20808);
    }

    #[test]
    fn amount_209() {
        assert_eq!(parse_amount("209.09"), 20909);
    }

    #[test]
    fn amount_210() {
        assert_eq!(parse_amount("210.10"), 21010);
    }

    #[test]
    fn amount_211() {
        assert_eq!(parse_amount("211.11"), 21111);
    }

    #[test]
    fn amount_212() {
        assert_eq!(parse_amount("212.12"), 21212);
    }

    #[test]
    fn amount_213() {
        assert_eq!(parse_amount("213.13"), 21313);
    }

    #[test]
    fn amount_214() {
        assert_eq!(parse_amount("214.14"), 21414);
    }

    #[test]
    fn amount_215() {
        assert_eq!(parse_amount("215.15"), 21515);
    }

    #[test]
    fn amount_216() {
        assert_eq!(parse_amount("216.16"), 21616);
    }

    #[test]
    fn amount_217() {
        assert_eq!(parse_amount("217.17"), 21717);
    }

    #[test]
    fn amount_218() {
        assert_eq!(parse_amount("218.18"), 21818);
    }

    #[test]
    fn amount_219() {
        assert_eq!(parse_amount("219.19"), 21919);
    }

    #[test]
    fn amount_220() {
        assert_eq!(parse_amount("220.20"), 22020);
    }

    #[test]
    fn amount_221() {
        assert_eq!(parse_amount("221.21"), 22121);
    }

    #[test]
    fn amount_222() {
        assert_eq!(parse_amount("222.22"), 22222);
    }

    #[test]
    fn amount_223() {
        assert_eq!(parse_amount("223.23"), 22323);
    }

    #[test]
    fn amount_224() {
        assert_eq!(parse_amount("224.24"), 22424);
    }

    #[test]
    fn amount_225() {
        assert_eq!(parse_amount("225.25"), 22525);
    }

    #[test]
    fn amount_226() {
        assert_eq!(parse_amount("226.26"), 22626);
    }

    #[test]
    fn amount_227() {
        assert_eq!(parse_amount("227.27"), 22727);
    }

    #[test]
    fn amount_228() {
        assert_eq!(parse_amount("228.28"), 22828);
    }

    #[test]
    fn amount_229() {
        assert_eq!(parse_amount("229.29"), 22929);
    }

    #[test]
    fn amount_230() {
        assert_eq!(parse_amount("230.30"), 23030);
    }

    #[test]
    fn amount_231() {
        assert_eq!(parse_amount("231.31"), 23131);
    }

    #[test]
    fn amount_232() {
        assert_eq!(parse_amount("232.32"), 23232);
    }

    #[test]
    fn amount_233() {
        assert_eq!(parse_amount("233.33"), 23333);
    }

    #[test]
    fn amount_234() {
        assert_eq!(parse_amount("234.34"), 23434);
    }

    #[test]
    fn amount_235() {
        assert_eq!(parse_amount("235.35"), 23535);
    }

    #[test]
    fn amount_236() {
        assert_eq!(parse_amount("236.36"), 23636);
    }

    #[test]
    fn amount_237() {
        assert_eq!(parse_amount("237.37"), 23737);
    }

    #[test]
    fn amount_238() {
        assert_eq!(parse_amount("238.38"), 23838);
    }

    #[test]
    fn amount_239() {
        assert_eq!(parse_amount("239.39"), 23939);
    }

    #[test]
    fn amount_240() {
        assert_eq!(parse_amount("240.40"), 24040);
    }

    #[test]
    fn amount_241() {
        assert_eq!(parse_amount("241.41"), 24141);
    }

    #[test]
    fn amount_242() {
        assert_eq!(parse_amount("242.42"), 24242);
    }

    #[test]
    fn amount_243() {
        assert_eq!(parse_amount("243.43"), 24343);
    }

    #[test]
    fn amount_244() {
        assert_eq!(parse_amount("244.44"), 24444);
    }

    #[test]
    fn amount_245() {
        assert_eq!(parse_amount("245.45"), 24545);
    }

    #[test]
    fn amount_246() {
        assert_eq!(parse_amount("246.46"), 24646);
    }

    #[test]
    fn amount_247() {
        assert_eq!(parse_amount("247.47"), 24747);
    }

    #[test]
    fn amount_248() {
        assert_eq!(parse_amount("248.48"), 24848);
    }

    #[test]
    fn amount_249() {
        assert_eq!(parse_amount("249.49"), 24949);
    }

    #[test]
    fn amount_250() {
        assert_eq!(parse_amount("250.50"), 25050);
    }

    #[test]
    fn amount_251() {
        assert_eq!(parse_amount("251.51"), 25151);
    }

    #[test]
    fn amount_252() {
        assert_eq!(parse_amount("252.52"), 25252);
    }

    #[test]
    fn amount_253() {
        assert_eq!(parse_amount("253.53"), 25353);
    }

    #[test]
    fn amount_254() {
        assert_eq!(parse_amount("254.54"), 25454);
    }

    #[test]
    fn amount_255() {
        assert_eq!(parse_amount("255.55"), 25555);
    }

    #[test]
    fn amount_256() {
        assert_eq!(parse_amount("256.56"), 25656);
    }

    #[test]
    fn amount_257() {
        assert_eq!(parse_amount("257.57"), 25757);
    }

    #[test]
    fn amount_258() {
        assert_eq!(parse_amount("258.58"), 25858);
    }

    #[test]
    fn amount_259() {
        assert_eq!(parse_amount("259.59"), 25959);
    }

    #[test]
    fn amount_260() {
        assert_eq!(parse_amount("260.60"), 26060);
    }

    #[test]
    fn amount_261() {
        assert_eq!(parse_amount("261.61"), 26161);
    }

    #[test]
    fn amount_262() {
        assert_eq!(parse_amount("262.62"), 26262);
    }

    #[test]
    fn amount_263() {
        assert_eq!(parse_amount("263.63"), 26363);
    }

    #[test]
    fn amount_264() {
        assert_eq!(parse_amount("264.64"), 26464);
    }

    #[test]
    fn amount_265() {
        assert_eq!(parse_amount("265.65"), 26565);
    }

    #[test]
    fn amount_266() {
        assert_eq!(parse_amount("266.66"), 26666);
    }

    #[test]
    fn amount_267() {
        assert_eq!(parse_amount("267.67"), 26767);
    }

    #[test]
    fn amount_268() {
        assert_eq!(parse_amount("268.68"), 26868);
    }

    #[test]
    fn amount_269() {
        assert_eq!(parse_amount("269.69"), 26969);
    }

    #[test]
    fn amount_270() {
        assert_eq!(parse_amount("270.70"), 27070);
    }

    #[test]
    fn amount_271() {
        assert_eq!(parse_amount("271.71"), 27171);
    }

    #[test]
    fn amount_272() {
        assert_eq!(parse_amount("272.72"), 27272);
    }

    #[test]
    fn amount_273() {
        assert_eq!(parse_amount("273.73"), 27373);
    }

    #[test]
    fn amount_274() {
        assert_eq!(parse_amount("274.74"), 27474);
    }

    #[test]
    fn amount_275() {
        assert_eq!(parse_amount("275.75"), 27575);
    }

    #[test]
    fn amount_276() {
        assert_eq!(parse_amount("276.76"), 27676);
    }

    #[test]
    fn amount_277() {
        assert_eq!(parse_amount("277.77"), 27777);
    }

    #[test]
    fn amount_278() {
        assert_eq!(parse_amount("278.78"), 27878);
    }

    #[test]
    fn amount_279() {
        assert_eq!(parse_amount("279.79"), 27979);
    }

    #[test]
    fn amount_280() {
        assert_eq!(parse_amount("280.80"), 28080);
    }

    #[test]
    fn amount_281() {
        assert_eq!(parse_amount("281.81"), 28181);
    }

    #[test]
    fn amount_282() {
        assert_eq!(parse_amount("282.82"), 28282);
    }

    #[test]
    fn amount_283() {
        assert_eq!(parse_amount("283.83"), 28383);
    }

    #[test]
    fn amount_284() {
        assert_eq!(parse_amount("284.84"), 28484);
    }

    #[test]
    fn amount_285() {
        assert_eq!(parse_amount("285.85"), 28585);
    }

    #[test]
    fn amount_286() {
        assert_eq!(parse_amount("286.86"), 28686);
    }

    #[test]
    fn amount_287() {
        assert_eq!(parse_amount("287.87"), 28787);
    }

    #[test]
    fn amount_288() {
        assert_eq!(parse_amount("288.88"), 28888);
    }

    #[test]
    fn amount_289() {
        assert_eq!(parse_amount("289.89"), 28989);
    }

    #[test]
    fn amount_290() {
        assert_eq!(parse_amount("290.90"), 29090);
    }

    #[test]
    fn amount_291() {
        assert_eq!(parse_amount("291.91"), 29191);
    }

    #[test]
    fn amount_292() {
        assert_eq!(parse_amount("292.92"), 29292);
    }

    #[test]
    fn amount_293() {
        assert_eq!(parse_amount("293.93"), 29393);
    }

    #[test]
    fn amount_294() {
        assert_eq!(parse_amount("294.94"), 29494);
    }

    #[test]
    fn amount_295() {
        assert_eq!(parse_amount("295.95"), 29595);
    }

    #[test]
    fn amount_296() {
        assert_eq!(parse_amount("296.96"), 29696);
    }

    #[test]
    fn amount_297() {
        assert_eq!(parse_amount("297.7"), 29770);
    }

    #[test]
    fn amount_298() {
        assert_eq!(parse_amount("298.98"), 29898);
    }

    #[test]
    fn amount_299() {
        assert_eq!(parse_amount("299.99"), 29999);
    }

}
