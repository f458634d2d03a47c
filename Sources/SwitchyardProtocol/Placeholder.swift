public enum SwitchyardProtocolPlaceholder {}
