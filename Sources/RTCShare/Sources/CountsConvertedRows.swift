/// A screen source that converts only the rows its compositor says were drawn, and counts the
/// rows it converted (rows of the picture as stored; a whole picture counts all of them), so a
/// share's counters show what a small change costs beside a whole one. Read from the
/// pipeline's thread while the capture thread runs the source: implementations keep the count
/// in an atomic.
public protocol CountsConvertedRows: AnyObject {
    var rowsConverted: Int { get }
}
