import SwiftSignalKit
print("demo")
