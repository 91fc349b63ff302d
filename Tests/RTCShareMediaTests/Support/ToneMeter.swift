/// Measures the frequency of a tone in 16-bit PCM: the mean period between rising zero
/// crossings (interpolated between samples, with hysteresis so noise near zero does not count),
/// ignoring periods far from the median — so silence or a glitch in the middle of the signal
/// does not bias the result.
enum ToneMeter {
    static func frequency(_ samples: [Int16], sampleRate: Double, threshold: Int16 = 500) -> Double? {
        var crossings: [Double] = []
        var armed = false
        for i in 1..<max(samples.count, 1) {
            if samples[i] < -threshold { armed = true }
            if armed, samples[i - 1] < 0, samples[i] >= 0 {
                let a = Double(samples[i - 1]), b = Double(samples[i])
                crossings.append(Double(i - 1) + (-a) / (b - a))
                armed = false
            }
        }
        guard crossings.count > 10 else { return nil }
        let periods = zip(crossings, crossings.dropFirst()).map { $1 - $0 }
        let median = periods.sorted()[periods.count / 2]
        let good = periods.filter { abs($0 - median) < 0.1 * median }
        guard good.count > 5 else { return nil }
        return sampleRate * Double(good.count) / good.reduce(0, +)
    }
}
