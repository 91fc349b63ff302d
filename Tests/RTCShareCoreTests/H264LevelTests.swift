import RTCShareCore
import Testing

/// The level a size and rate need (H.264 Table A-1), and the `profile-level-id` announcing it.
@Suite struct H264LevelTests {
    @Test(arguments: [
        (640, 360, 20, 31, "42e01f"), (1280, 720, 30, 31, "42e01f"), (1280, 720, 60, 32, "42e020"),
        (1600, 900, 20, 40, "42e028"), (1920, 1080, 30, 40, "42e028"), (1920, 1080, 60, 42, "42e02a"),
        (3840, 2160, 30, 51, "42e033"),
    ])
    func levelFollowsMacroblocksPerFrameAndPerSecond(width: Int, height: Int, fps: Int, idc: Int, id: String) {
        #expect(H264Level.idc(width: width, height: height, framesPerSecond: fps) == idc)
        #expect(H264Level.profileLevelID(idc: idc) == id)
        #expect(H264Level.formatParameters(idc: idc) == "profile-level-id=\(id);packetization-mode=1;level-asymmetry-allowed=1")
    }
}
