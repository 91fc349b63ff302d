import RTCShareCore
import RTCShareMedia

/// The audio side of a share as the run loop drives it: capture (a tone, a file, a producer's
/// PCM), resampling to 48 kHz and Opus. It runs on the pipeline thread between video frames;
/// each call encodes everything captured up to `now`, 20 ms at a time.
public protocol AudioPath: AnyObject {
    /// A name for logs ("testtone 440 Hz", "wav:talk.wav").
    var name: String { get }
    /// Encodes the audio captured up to `now`, handing each packet to `emit` in order.
    func pump(at now: MediaTime, emit: (OutgoingAudioPacket) throws(ShareError) -> Void) throws(ShareError)
    /// When the next packet is due (the run loop sleeps no longer than that).
    var nextWakeup: MediaTime? { get }
    /// A receiver report on the audio stream (fraction lost / 256): the encoder's in-band FEC
    /// follows the loss (`OpusLossProtection`).
    func receiverReport(fractionLost: UInt8)
    /// The packet loss the encoder prepares for now, percent.
    var expectedLossPercent: Int { get }
}
