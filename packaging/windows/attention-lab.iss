; Inno Setup script for Attention Lab (Windows). Not built or tested on Linux: see packaging/README.md.
; Build the folder first:  py packaging\build.py --flavour full --no-deb
; then:                    iscc packaging\windows\attention-lab.iss
#define AppVersion "0.1.0"

[Setup]
AppId={{6E0C7E52-4A51-4D53-9C4B-ATTENTIONLAB1}
AppName=Attention Lab
AppVersion={#AppVersion}
DefaultDirName={autopf}\Attention Lab
DefaultGroupName=Attention Lab
OutputDir=..\..\build
OutputBaseFilename=attention-lab-{#AppVersion}-setup
SetupIconFile=..\..\build\icons\attention-lab.ico
Compression=lzma2
SolidCompression=yes
ArchitecturesInstallIn64BitMode=x64compatible
PrivilegesRequiredOverridesAllowed=dialog

[Files]
Source: "..\..\build\dist-full\attention-lab\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\Attention Lab"; Filename: "{app}\attention-lab.exe"
Name: "{autodesktop}\Attention Lab"; Filename: "{app}\attention-lab.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked

[Run]
Filename: "{app}\attention-lab.exe"; Description: "Start Attention Lab"; Flags: nowait postinstall skipifsilent
